// Convolution and pooling on the issue-3 CNN shapes (batch 64): forward by im2col+GEMM vs direct,
// both gradients, and the 2x2 max pool. Prints median milliseconds and GFLOP/s.
// Usage: bench_conv [reps] [batch]
//        bench_conv --models [reps] [batch]   the forward layers of ResNet-18 and MobileNetV2 (batch 1
//            by default): the automatic choice (weights packed once, as for constant weights) beside
//            the whole-im2col GEMM. TESSERA_BENCH_CLOCK=cpu TESSERA_BENCH_STAT=min on a shared machine.
//        bench_conv --pointwise [reps] [batch]   MobileNetV2's 1x1 layers by each algorithm.
//        bench_conv --depthwise-pointwise [reps] [batch]   MobileNetV2's depthwise + 1x1 projection pairs
//            as two calls and as one (conv2d_depthwise_pointwise_forward).
//        bench_conv --winograd [reps] [batch] [channels]   ResNet-18's 3x3 stride-1 layers (or the one of
//            `channels`) by direct tiles and by Winograd.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/kernels/bench_util.h"
#include "tessera/kernels/cpu/conv.h"
#include "tessera/kernels/cpu/pool.h"

using namespace tessera;
using namespace tessera::kernels;

namespace {

void bench_layer(const char* name, const Conv2dGeometry& g, int reps) {
  const int64_t xs = g.batch * g.in_channels * g.in_h * g.in_w;
  const int64_t ws = g.out_channels * g.in_channels / g.groups * g.kernel_h * g.kernel_w;
  const int64_t ys = g.batch * g.out_channels * g.out_h * g.out_w;
  auto x = bench::random_vector(static_cast<size_t>(xs), 1), w = bench::random_vector(static_cast<size_t>(ws), 2);
  auto bias = bench::random_vector(static_cast<size_t>(g.out_channels), 3);
  auto dy = bench::random_vector(static_cast<size_t>(ys), 4);
  std::vector<float> y(static_cast<size_t>(ys)), dx(static_cast<size_t>(xs)), dw(static_cast<size_t>(ws));
  const double flops = 2.0 * static_cast<double>(ys) * static_cast<double>(ws / g.out_channels);
  std::vector<char> wsf(static_cast<size_t>(conv2d_forward_workspace_bytes(g)) + 64);
  // An explicit im2col workspace (the automatic choice may need none).
  Conv2dGeometry big = g;
  std::vector<float> col(static_cast<size_t>(
      runtime::default_pool().size() * (g.in_channels / g.groups) * g.kernel_h * g.kernel_w * g.out_h * g.out_w + 64));
  std::vector<char> wsi(static_cast<size_t>(conv2d_input_grad_workspace_bytes(g)) + 64);
  std::vector<char> wsw(static_cast<size_t>(conv2d_weight_grad_workspace_bytes(g)) + 64);
  ConvEpilogue relu;
  relu.activation = Activation::relu;
  auto report = [&](const char* what, double seconds) {
    std::printf("%-26s %-22s %9.3f ms %8.1f GFLOP/s\n", name, what, seconds * 1e3, flops / seconds * 1e-9);
  };
  report("fwd im2col+gemm", bench::median_seconds(
                                [&] {
                                  conv2d_forward(big, x.data(), w.data(), bias.data(), y.data(), col.data(), relu,
                                                 nullptr, ConvAlgorithm::im2col_gemm);
                                },
                                reps));
  report("fwd direct", bench::median_seconds(
                           [&] {
                             conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), wsf.data(), relu, nullptr,
                                            ConvAlgorithm::direct);
                           },
                           reps));
  report("fwd automatic",
         bench::median_seconds([&] { conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), wsf.data(), relu); },
                               reps));
  report("input grad",
         bench::median_seconds([&] { conv2d_input_grad(g, dy.data(), w.data(), dx.data(), wsi.data()); }, reps));
  report("weight grad",
         bench::median_seconds([&] { conv2d_weight_grad(g, x.data(), dy.data(), dw.data(), wsw.data()); }, reps));
}

void bench_pool(const char* name, int64_t planes, int64_t h, int64_t w, int reps) {
  const Pool2dGeometry g = make_pool2d_geometry(planes, h, w, 2, 2);
  auto x = bench::random_vector(static_cast<size_t>(planes * h * w), 5);
  auto dy = bench::random_vector(static_cast<size_t>(planes * g.out_h * g.out_w), 6);
  std::vector<float> y(dy.size()), dx(x.size());
  const double bytes = 4.0 * static_cast<double>(x.size() + y.size());
  const double f = bench::median_seconds([&] { max_pool2d_forward(g, x.data(), y.data()); }, reps);
  const double b = bench::median_seconds([&] { max_pool2d_backward(g, x.data(), dy.data(), dx.data()); }, reps);
  std::printf("%-26s %-22s %9.3f ms %8.1f GB/s\n", name, "max_pool fwd", f * 1e3, bytes / f * 1e-9);
  std::printf("%-26s %-22s %9.3f ms %8.1f GB/s\n", name, "max_pool bwd", b * 1e3, 2 * bytes / b * 1e-9);
}

// One layer of a model: the automatic forward pass with prepacked weights and a ReLU tail, beside
// im2col + GEMM.
double bench_model_layer(const char* name, const Conv2dGeometry& g, int reps, double* im2col_seconds) {
  const int64_t xs = g.batch * g.in_channels * g.in_h * g.in_w;
  const int64_t ws = g.out_channels * g.in_channels / g.groups * g.kernel_h * g.kernel_w;
  const int64_t ys = g.batch * g.out_channels * g.out_h * g.out_w;
  auto x = bench::random_vector(static_cast<size_t>(xs), 1), w = bench::random_vector(static_cast<size_t>(ws), 2);
  auto bias = bench::random_vector(static_cast<size_t>(g.out_channels), 3);
  std::vector<float> y(static_cast<size_t>(ys)), packed(static_cast<size_t>(conv2d_packed_weights_floats(g)));
  conv2d_pack_weights(g, w.data(), packed.data());
  const double flops = 2.0 * static_cast<double>(ys) * static_cast<double>(ws / g.out_channels);
  ConvEpilogue relu;
  relu.activation = Activation::relu;
  const double automatic = bench::median_seconds(
      [&] {
        conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), nullptr, relu, nullptr, ConvAlgorithm::automatic,
                       packed.data());
      },
      reps);
  *im2col_seconds = g.groups > 1 && g.in_channels == g.groups
                        ? automatic
                        : bench::median_seconds(
                              [&] {
                                conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), nullptr, relu, nullptr,
                                               ConvAlgorithm::im2col_gemm);
                              },
                              reps);
  std::printf("%-34s automatic %8.3f ms %7.1f GFLOP/s   im2col+gemm %8.3f ms %7.1f GFLOP/s\n", name, automatic * 1e3,
              flops / automatic * 1e-9, *im2col_seconds * 1e3, flops / *im2col_seconds * 1e-9);
  return automatic;
}

// Each distinct forward convolution of ResNet-18 and MobileNetV2 at 224x224, with its count.
int bench_models(int reps, int64_t batch) {
  struct Layer {
    const char* name;
    int count;
    Conv2dGeometry g;
  };
  auto conv = [&](int64_t cin, int64_t hw, int64_t cout, int64_t k, int64_t s, int64_t groups = 1) {
    return make_conv2d_geometry(batch, cin, hw, hw, cout, k, k, s, s, k / 2, k / 2, 1, 1, groups);
  };
  const Layer layers[] = {
      {"resnet18 stem 3->64 7x7 s2", 1, conv(3, 224, 64, 7, 2)},
      {"resnet18 64->64 3x3 56", 4, conv(64, 56, 64, 3, 1)},
      {"resnet18 64->128 3x3 s2", 1, conv(64, 56, 128, 3, 2)},
      {"resnet18 64->128 1x1 s2", 1, conv(64, 56, 128, 1, 2)},
      {"resnet18 128->128 3x3 28", 3, conv(128, 28, 128, 3, 1)},
      {"resnet18 128->256 3x3 s2", 1, conv(128, 28, 256, 3, 2)},
      {"resnet18 128->256 1x1 s2", 1, conv(128, 28, 256, 1, 2)},
      {"resnet18 256->256 3x3 14", 3, conv(256, 14, 256, 3, 1)},
      {"resnet18 256->512 3x3 s2", 1, conv(256, 14, 512, 3, 2)},
      {"resnet18 256->512 1x1 s2", 1, conv(256, 14, 512, 1, 2)},
      {"resnet18 512->512 3x3 7", 3, conv(512, 7, 512, 3, 1)},
      {"mobilenet stem 3->32 3x3 s2", 1, conv(3, 224, 32, 3, 2)},
      {"mobilenet dw 32 3x3 112", 1, conv(32, 112, 32, 3, 1, 32)},
      {"mobilenet 32->16 1x1 112", 1, conv(32, 112, 16, 1, 1)},
      {"mobilenet 16->96 1x1 112", 1, conv(16, 112, 96, 1, 1)},
      {"mobilenet dw 96 3x3 s2 112", 1, conv(96, 112, 96, 3, 2, 96)},
      {"mobilenet 96->24 1x1 56", 1, conv(96, 56, 24, 1, 1)},
      {"mobilenet 24->144 1x1 56", 2, conv(24, 56, 144, 1, 1)},
      {"mobilenet dw 144 3x3 56", 1, conv(144, 56, 144, 3, 1, 144)},
      {"mobilenet 144->24 1x1 56", 1, conv(144, 56, 24, 1, 1)},
      {"mobilenet dw 144 3x3 s2 56", 1, conv(144, 56, 144, 3, 2, 144)},
      {"mobilenet 144->32 1x1 28", 1, conv(144, 28, 32, 1, 1)},
      {"mobilenet 32->192 1x1 28", 3, conv(32, 28, 192, 1, 1)},
      {"mobilenet dw 192 3x3 28", 2, conv(192, 28, 192, 3, 1, 192)},
      {"mobilenet 192->32 1x1 28", 2, conv(192, 28, 32, 1, 1)},
      {"mobilenet dw 192 3x3 s2 28", 1, conv(192, 28, 192, 3, 2, 192)},
      {"mobilenet 192->64 1x1 14", 1, conv(192, 14, 64, 1, 1)},
      {"mobilenet 64->384 1x1 14", 4, conv(64, 14, 384, 1, 1)},
      {"mobilenet dw 384 3x3 14", 4, conv(384, 14, 384, 3, 1, 384)},
      {"mobilenet 384->64 1x1 14", 3, conv(384, 14, 64, 1, 1)},
      {"mobilenet 384->96 1x1 14", 1, conv(384, 14, 96, 1, 1)},
      {"mobilenet 96->576 1x1 14", 3, conv(96, 14, 576, 1, 1)},
      {"mobilenet dw 576 3x3 14", 2, conv(576, 14, 576, 3, 1, 576)},
      {"mobilenet 576->96 1x1 14", 2, conv(576, 14, 96, 1, 1)},
      {"mobilenet dw 576 3x3 s2 14", 1, conv(576, 14, 576, 3, 2, 576)},
      {"mobilenet 576->160 1x1 7", 1, conv(576, 7, 160, 1, 1)},
      {"mobilenet 160->960 1x1 7", 3, conv(160, 7, 960, 1, 1)},
      {"mobilenet dw 960 3x3 7", 3, conv(960, 7, 960, 3, 1, 960)},
      {"mobilenet 960->160 1x1 7", 2, conv(960, 7, 160, 1, 1)},
      {"mobilenet 960->320 1x1 7", 1, conv(960, 7, 320, 1, 1)},
      {"mobilenet 320->1280 1x1 7", 1, conv(320, 7, 1280, 1, 1)},
  };
  std::printf("threads=%d batch=%lld\n", runtime::default_pool().size(), static_cast<long long>(batch));
  double resnet = 0, resnet_im2col = 0, mobilenet = 0, mobilenet_im2col = 0;
  for (const Layer& l : layers) {
    double im2col = 0;
    const double t = bench_model_layer(l.name, l.g, reps, &im2col);
    const bool is_resnet = std::strncmp(l.name, "resnet", 6) == 0;
    (is_resnet ? resnet : mobilenet) += l.count * t;
    (is_resnet ? resnet_im2col : mobilenet_im2col) += l.count * im2col;
  }
  std::printf("convolutions in all: resnet18 %.2f ms (im2col+gemm %.2f), mobilenet_v2 %.2f ms (%.2f)\n", resnet * 1e3,
              resnet_im2col * 1e3, mobilenet * 1e3, mobilenet_im2col * 1e3);
  return 0;
}

// One layer by one algorithm, weights packed once for it, with a ReLU tail: median seconds.
double time_algorithm(const Conv2dGeometry& g, ConvAlgorithm algorithm, int reps) {
  const int64_t ws = g.out_channels * g.in_channels / g.groups * g.kernel_h * g.kernel_w;
  const int64_t ys = g.batch * g.out_channels * g.out_h * g.out_w;
  auto x = bench::random_vector(static_cast<size_t>(g.batch * g.in_channels * g.in_h * g.in_w), 1);
  auto w = bench::random_vector(static_cast<size_t>(ws), 2), bias = bench::random_vector(static_cast<size_t>(g.out_channels), 3);
  std::vector<float> y(static_cast<size_t>(ys)), packed(static_cast<size_t>(conv2d_packed_weights_floats(g)));
  conv2d_pack_weights(g, w.data(), packed.data(), nullptr, algorithm);
  std::vector<char> work(static_cast<size_t>(conv2d_forward_workspace_bytes(g, nullptr, true)) + 64);
  ConvEpilogue relu;
  relu.activation = Activation::relu;
  return bench::median_seconds(
      [&] {
        conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), work.data(), relu, nullptr, algorithm,
                       packed.data());
      },
      reps);
}

// The 3x3 stride-1 layers of ResNet-18 (and a few other channel counts) by direct tiles and by
// Winograd F(2x2, 3x3) and F(4x4, 3x3): the measurements behind winograd_apply's and winograd_tile's rules.
int bench_winograd(int reps, int64_t batch, int64_t only_channels) {
  std::printf("threads=%d batch=%lld\n", runtime::default_pool().size(), static_cast<long long>(batch));
  const int64_t shapes[][2] = {{16, 56}, {32, 56}, {64, 56}, {128, 28}, {256, 14}, {512, 7}, {32, 28}, {64, 14}};
  for (const auto& s : shapes) {
    if (only_channels != 0 && s[0] != only_channels) continue;
    const Conv2dGeometry g = make_conv2d_geometry(batch, s[0], s[1], s[1], s[0], 3, 3, 1, 1, 1, 1);
    const double flops = 2.0 * static_cast<double>(g.batch * g.out_channels * g.out_h * g.out_w * g.in_channels * 9);
    const double direct = time_algorithm(g, ConvAlgorithm::direct_tiles, reps);
    const double winograd = time_algorithm(g, ConvAlgorithm::winograd, reps);
    const double winograd4 = time_algorithm(g, ConvAlgorithm::winograd_4x4, reps);
    std::printf("%4lld->%-4lld %3lldx%-3lld direct tiles %8.3f ms %7.1f GFLOP/s   F(2x2) %8.3f ms %.2fx   F(4x4) %8.3f ms "
                "%.2fx\n",
                static_cast<long long>(s[0]), static_cast<long long>(s[0]), static_cast<long long>(s[1]),
                static_cast<long long>(s[1]), direct * 1e3, flops / direct * 1e-9, winograd * 1e3, direct / winograd,
                winograd4 * 1e3, direct / winograd4);
  }
  return 0;
}

// MobileNetV2's pointwise layers by the implicit GEMM, direct tiles and pixel-vector rows.
int bench_pointwise(int reps, int64_t batch) {
  std::printf("threads=%d batch=%lld\n", runtime::default_pool().size(), static_cast<long long>(batch));
  const int64_t shapes[][3] = {{32, 16, 112}, {16, 96, 112}, {96, 24, 56}, {24, 144, 56}, {144, 24, 56},
                               {32, 192, 28}, {192, 32, 28}, {64, 384, 14}, {384, 64, 14}, {96, 576, 14},
                               {576, 96, 14}, {160, 960, 7},  {960, 160, 7}, {320, 1280, 7}};
  for (const auto& s : shapes) {
    const Conv2dGeometry g = make_conv2d_geometry(batch, s[0], s[2], s[2], s[1], 1, 1);
    const double gemm = time_algorithm(g, ConvAlgorithm::implicit_gemm, reps);
    const double tiles = time_algorithm(g, ConvAlgorithm::direct_tiles, reps);
    const double rows = time_algorithm(g, ConvAlgorithm::pointwise_rows, reps);
    std::printf("%4lld->%-4lld %3lldx%-3lld implicit gemm %8.3f ms  direct tiles %8.3f ms  pixel rows %8.3f ms\n",
                static_cast<long long>(s[0]), static_cast<long long>(s[1]), static_cast<long long>(s[2]),
                static_cast<long long>(s[2]), gemm * 1e3, tiles * 1e3, rows * 1e3);
  }
  return 0;
}

// MobileNetV2's depthwise convolutions with the 1x1 projection after them: the two calls (each the
// automatic choice, weights packed once) against conv2d_depthwise_pointwise_forward.
int bench_depthwise_pointwise(int reps, int64_t batch) {
  std::printf("threads=%d batch=%lld\n", runtime::default_pool().size(), static_cast<long long>(batch));
  // channels, input size, stride, projected channels, the expansion's input channels (0: none)
  const int64_t pairs[][5] = {{32, 112, 1, 16, 0},    {96, 112, 2, 24, 16},  {144, 56, 1, 24, 24},
                              {144, 56, 2, 32, 24},   {192, 28, 1, 32, 32},  {192, 28, 2, 64, 32},
                              {384, 14, 1, 64, 64},   {384, 14, 1, 96, 64},  {576, 14, 1, 96, 96},
                              {576, 14, 2, 160, 96},  {960, 7, 1, 160, 160}, {960, 7, 1, 320, 160}};
  for (const auto& p : pairs) {
    const Conv2dGeometry dw = make_conv2d_geometry(batch, p[0], p[1], p[1], p[0], 3, 3, p[2], p[2], 1, 1, 1, 1, p[0]);
    const Conv2dGeometry pw = make_conv2d_geometry(batch, p[0], dw.out_h, dw.out_w, p[3], 1, 1);
    auto x = bench::random_vector(static_cast<size_t>(batch * p[0] * p[1] * p[1]), 1);
    auto wd = bench::random_vector(static_cast<size_t>(p[0] * 9), 2), bd = bench::random_vector(static_cast<size_t>(p[0]), 3);
    auto wp = bench::random_vector(static_cast<size_t>(p[0] * p[3]), 4), bp = bench::random_vector(static_cast<size_t>(p[3]), 5);
    std::vector<float> mid(static_cast<size_t>(batch * p[0] * dw.out_h * dw.out_w));
    std::vector<float> y(static_cast<size_t>(batch * p[3] * dw.out_h * dw.out_w));
    std::vector<float> packed(static_cast<size_t>(conv2d_packed_weights_floats(pw)));
    std::vector<float> rows_packed(packed.size());
    conv2d_pack_weights(pw, wp.data(), packed.data());
    conv2d_pack_weights(pw, wp.data(), rows_packed.data(), nullptr, ConvAlgorithm::pointwise_rows);
    std::vector<char> work(static_cast<size_t>(conv2d_forward_workspace_bytes(pw, nullptr, true)) + 64);
    ConvEpilogue relu6;
    relu6.activation = Activation::relu6;
    const double apart = bench::median_seconds(
        [&] {
          conv2d_forward(dw, x.data(), wd.data(), bd.data(), mid.data(), nullptr, relu6);
          conv2d_forward(pw, mid.data(), wp.data(), bp.data(), y.data(), work.data(), {}, nullptr,
                         ConvAlgorithm::automatic, packed.data());
        },
        reps);
    const double fused = bench::median_seconds(
        [&] {
          conv2d_depthwise_pointwise_forward(dw, x.data(), wd.data(), bd.data(), Activation::relu6, pw, wp.data(),
                                             bp.data(), y.data(), nullptr, {}, nullptr, rows_packed.data());
        },
        reps);
    std::printf("dw %4lld %3lldx%-3lld s%lld -> %4lld  two calls %8.3f ms  fused %8.3f ms  %.2fx%s\n",
                static_cast<long long>(p[0]), static_cast<long long>(p[1]), static_cast<long long>(p[1]),
                static_cast<long long>(p[2]), static_cast<long long>(p[3]), apart * 1e3, fused * 1e3, apart / fused,
                conv2d_depthwise_pointwise_fuses(dw, pw) ? "" : "  (not chosen)");
    if (p[4] == 0) continue;
    // With the expansion before it: three calls against one.
    ConvExpansion e;
    e.g = make_conv2d_geometry(batch, p[4], p[1], p[1], p[0], 1, 1);
    auto xe = bench::random_vector(static_cast<size_t>(batch * p[4] * p[1] * p[1]), 6);
    auto we = bench::random_vector(static_cast<size_t>(p[4] * p[0]), 7), be = bench::random_vector(static_cast<size_t>(p[0]), 8);
    std::vector<float> e_packed(static_cast<size_t>(conv2d_packed_weights_floats(e.g))), e_rows(e_packed.size());
    conv2d_pack_weights(e.g, we.data(), e_packed.data());
    conv2d_pack_weights(e.g, we.data(), e_rows.data(), nullptr, ConvAlgorithm::pointwise_rows);
    std::vector<char> e_work(static_cast<size_t>(conv2d_forward_workspace_bytes(e.g, nullptr, true)) + 64);
    e.w = we.data();
    e.bias = be.data();
    e.activation = Activation::relu6;
    e.packed = e_rows.data();
    const double apart3 = bench::median_seconds(
        [&] {
          conv2d_forward(e.g, xe.data(), we.data(), be.data(), x.data(), e_work.data(), relu6, nullptr,
                         ConvAlgorithm::automatic, e_packed.data());
          conv2d_forward(dw, x.data(), wd.data(), bd.data(), mid.data(), nullptr, relu6);
          conv2d_forward(pw, mid.data(), wp.data(), bp.data(), y.data(), work.data(), {}, nullptr,
                         ConvAlgorithm::automatic, packed.data());
        },
        reps);
    const double fused3 = bench::median_seconds(
        [&] {
          conv2d_depthwise_pointwise_forward(dw, xe.data(), wd.data(), bd.data(), Activation::relu6, pw, wp.data(),
                                             bp.data(), y.data(), nullptr, {}, nullptr, rows_packed.data(), &e);
        },
        reps);
    std::printf("  with the %4lld -> %4lld expansion   three calls %8.3f ms  fused %8.3f ms  %.2fx%s\n",
                static_cast<long long>(p[4]), static_cast<long long>(p[0]), apart3 * 1e3, fused3 * 1e3,
                apart3 / fused3, conv2d_expand_depthwise_pointwise_fuses(e.g, dw, pw) ? "" : "  (not chosen)");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--depthwise-pointwise") == 0) {
    return bench_depthwise_pointwise(argc > 2 ? std::atoi(argv[2]) : 7, argc > 3 ? std::atoll(argv[3]) : 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "--pointwise") == 0) {
    return bench_pointwise(argc > 2 ? std::atoi(argv[2]) : 7, argc > 3 ? std::atoll(argv[3]) : 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "--models") == 0) {
    return bench_models(argc > 2 ? std::atoi(argv[2]) : 7, argc > 3 ? std::atoll(argv[3]) : 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "--winograd") == 0) {
    return bench_winograd(argc > 2 ? std::atoi(argv[2]) : 7, argc > 3 ? std::atoll(argv[3]) : 1,
                          argc > 4 ? std::atoll(argv[4]) : 0);
  }
  const int reps = argc > 1 ? std::atoi(argv[1]) : 11;
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 64;
  std::printf("threads=%d batch=%lld\n", runtime::default_pool().size(), static_cast<long long>(batch));
  bench_layer("conv1 1->32 3x3 28x28", make_conv2d_geometry(batch, 1, 28, 28, 32, 3, 3), reps);
  bench_layer("conv2 32->64 3x3 13x13", make_conv2d_geometry(batch, 32, 13, 13, 64, 3, 3), reps);
  bench_pool("pool1 32x26x26", batch * 32, 26, 26, reps);
  bench_pool("pool2 64x11x11", batch * 64, 11, 11, reps);
  return 0;
}
