// Convolution and pooling on the issue-3 CNN shapes (batch 64): forward by im2col+GEMM vs direct,
// both gradients, and the 2x2 max pool. Prints median milliseconds and GFLOP/s.
// Usage: bench_conv [reps] [batch]
#include <cstdio>
#include <cstdlib>
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

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 11;
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 64;
  std::printf("threads=%d batch=%lld\n", runtime::default_pool().size(), static_cast<long long>(batch));
  bench_layer("conv1 1->32 3x3 28x28", make_conv2d_geometry(batch, 1, 28, 28, 32, 3, 3), reps);
  bench_layer("conv2 32->64 3x3 13x13", make_conv2d_geometry(batch, 32, 13, 13, 64, 3, 3), reps);
  bench_pool("pool1 32x26x26", batch * 32, 26, 26, reps);
  bench_pool("pool2 64x11x11", batch * 64, 11, 11, reps);
  return 0;
}
