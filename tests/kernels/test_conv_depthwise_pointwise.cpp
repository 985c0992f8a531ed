// A depthwise convolution and the 1x1 one after it as one call (conv_depthwise_pointwise.cpp) against
// a double-precision pair computed here: bands cut off the 4-row blocks, planes off the 16-lane
// vectors and the 48-pixel tiles, stride 2, a 5x5 kernel, a channel multiplier, channel counts off the
// 8-row blocks, an activation not applied in registers, every tail of the 1x1, weights packed once,
// per call or in another layout, one to three threads, with a pointwise expansion before the depthwise
// convolution and without; and the same without AVX-512 (portable loops).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/conv_tails_check.h"

namespace tessera::kernels {
// Named: a unity batch shares its anonymous namespace with the other conv tests.
namespace depthwise_pointwise_test {

using conv_test::random_values;

// expand_in > 0: an expansion from that many channels (activation relu6) computes the depthwise input.
void check(const char* name, const Conv2dGeometry& dw, int64_t out_channels, Activation dw_act, std::mt19937& rng,
           int64_t expand_in = 0) {
  const Conv2dGeometry pw = make_conv2d_geometry(dw.batch, dw.out_channels, dw.out_h, dw.out_w, out_channels, 1, 1);
  const int64_t plane = dw.out_h * dw.out_w, taps = dw.kernel_h * dw.kernel_w, mult = dw.out_channels / dw.groups;
  const int64_t in_plane = dw.in_h * dw.in_w, xs = dw.batch * dw.in_channels * in_plane;
  // The depthwise input (the expansion's result in float, when there is one) and its rounding scale.
  ConvExpansion expansion;
  const auto xe = random_values(expand_in > 0 ? dw.batch * expand_in * in_plane : 0, rng);
  const auto we = random_values(expand_in * dw.in_channels, rng), be = random_values(expand_in > 0 ? dw.in_channels : 0, rng);
  std::vector<float> x = random_values(expand_in > 0 ? 0 : xs, rng);
  std::vector<double> x_mag(static_cast<size_t>(xs), 0.0);
  if (expand_in > 0) {
    expansion.g = make_conv2d_geometry(dw.batch, expand_in, dw.in_h, dw.in_w, dw.in_channels, 1, 1);
    expansion.w = we.data();
    expansion.bias = be.data();
    expansion.activation = Activation::relu6;
    x.resize(static_cast<size_t>(xs));
    for (int64_t n = 0; n < dw.batch; ++n)
      for (int64_t c = 0; c < dw.in_channels; ++c)
        for (int64_t p = 0; p < in_plane; ++p) {
          double sum = be[static_cast<size_t>(c)], mag = std::abs(sum);
          for (int64_t ci = 0; ci < expand_in; ++ci) {
            const double t = static_cast<double>(we[static_cast<size_t>(c * expand_in + ci)]) *
                             xe[static_cast<size_t>((n * expand_in + ci) * in_plane + p)];
            sum += t;
            mag += std::abs(t);
          }
          const auto i = static_cast<size_t>((n * dw.in_channels + c) * in_plane + p);
          x[i] = activation_value(Activation::relu6, static_cast<float>(sum));
          x_mag[i] = mag;
        }
  }
  const auto wd = random_values(dw.out_channels * taps, rng), bd = random_values(dw.out_channels, rng);
  const auto wp = random_values(out_channels * dw.out_channels, rng), bp = random_values(out_channels, rng);
  const int64_t ys = dw.batch * out_channels * plane;
  const auto residual = random_values(ys, rng, 3.0f);
  // The depthwise result (activation applied in float, as the kernels do) and its rounding scale.
  std::vector<double> mid(static_cast<size_t>(dw.batch * dw.out_channels * plane)), mid_mag(mid.size());
  for (int64_t n = 0; n < dw.batch; ++n)
    for (int64_t c = 0; c < dw.out_channels; ++c)
      for (int64_t oh = 0; oh < dw.out_h; ++oh)
        for (int64_t ow = 0; ow < dw.out_w; ++ow) {
          double sum = bd[static_cast<size_t>(c)], mag = std::abs(sum);
          for (int64_t kh = 0; kh < dw.kernel_h; ++kh)
            for (int64_t kw = 0; kw < dw.kernel_w; ++kw) {
              const int64_t ih = oh * dw.stride_h - dw.pad_h + kh, iw = ow * dw.stride_w - dw.pad_w + kw;
              if (ih < 0 || ih >= dw.in_h || iw < 0 || iw >= dw.in_w) continue;
              const double wv = wd[static_cast<size_t>(c * taps + kh * dw.kernel_w + kw)];
              const auto xi = static_cast<size_t>(((n * dw.in_channels + c / mult) * dw.in_h + ih) * dw.in_w + iw);
              sum += wv * x[xi];
              mag += std::abs(wv) * (std::abs(x[xi]) + x_mag[xi]);
            }
          const auto i = static_cast<size_t>((n * dw.out_channels + c) * plane + oh * dw.out_w + ow);
          mid[i] = activation_value(dw_act, static_cast<float>(sum));
          mid_mag[i] = mag;
        }
  std::vector<double> base(static_cast<size_t>(ys)), magnitude(base.size());
  for (int64_t n = 0; n < dw.batch; ++n)
    for (int64_t co = 0; co < out_channels; ++co)
      for (int64_t p = 0; p < plane; ++p) {
        double sum = 0, mag = 0;
        for (int64_t c = 0; c < dw.out_channels; ++c) {
          const double w = wp[static_cast<size_t>(co * dw.out_channels + c)];
          const auto i = static_cast<size_t>((n * dw.out_channels + c) * plane + p);
          sum += w * mid[i];
          // The depthwise result's own rounding (up to its magnitude's) carried through this weight.
          mag += std::abs(w) * (std::abs(mid[i]) + mid_mag[i]);
        }
        base[static_cast<size_t>((n * out_channels + co) * plane + p)] = sum;
        magnitude[static_cast<size_t>((n * out_channels + co) * plane + p)] = mag;
      }
  const std::vector<conv_test::Tail> tails = {{false, Activation::none, false, Activation::none, "none"},
                                              {true, Activation::none, true, Activation::none, "bias residual"},
                                              {true, Activation::relu6, true, Activation::relu, "bias relu6 residual relu"},
                                              {true, Activation::sigmoid, false, Activation::none, "bias sigmoid"}};
  enum class Packing { per_call, once, other_layout };
  for (int threads : {1, 2, 3}) {
    runtime::ThreadPool pool(threads);
    for (const conv_test::Tail& t : tails) {
      for (Packing packing : {Packing::per_call, Packing::once, Packing::other_layout}) {
        std::vector<float> expand_packed;
        expansion.packed = nullptr;
        if (expand_in > 0 && packing != Packing::per_call) {
          expand_packed.resize(static_cast<size_t>(conv2d_packed_weights_floats(expansion.g)));
          conv2d_pack_weights(expansion.g, we.data(), expand_packed.data(), &pool,
                              packing == Packing::once ? ConvAlgorithm::pointwise_rows : ConvAlgorithm::implicit_gemm);
          expansion.packed = expand_packed.data();
        }
        ConvEpilogue e;
        e.activation = t.activation;
        e.residual = t.residual ? residual.data() : nullptr;
        e.post_activation = t.post;
        std::vector<float> packed;
        if (packing != Packing::per_call) {
          packed.resize(static_cast<size_t>(conv2d_packed_weights_floats(pw)));
          conv2d_pack_weights(pw, wp.data(), packed.data(), &pool,
                              packing == Packing::once ? ConvAlgorithm::pointwise_rows : ConvAlgorithm::implicit_gemm);
        }
        std::vector<char> ws(static_cast<size_t>(conv2d_depthwise_pointwise_workspace_bytes(
            dw, pw, packing == Packing::once, expand_in > 0 ? &expansion.g : nullptr)));
        std::vector<float> y(static_cast<size_t>(ys), std::nanf(""));
        conv2d_depthwise_pointwise_forward(dw, expand_in > 0 ? xe.data() : x.data(), wd.data(), bd.data(), dw_act, pw,
                                           wp.data(), t.bias ? bp.data() : nullptr, y.data(),
                                           ws.empty() ? nullptr : ws.data(), e, &pool,
                                           packing == Packing::per_call ? nullptr : packed.data(),
                                           expand_in > 0 ? &expansion : nullptr);
        SCOPED_TRACE(testing::Message() << name << " avx512=" << use_avx512() << " threads=" << threads
                                        << " tail=" << t.name << " packing=" << static_cast<int>(packing));
        for (int64_t i = 0; i < ys; ++i) {
          const auto s = static_cast<size_t>(i);
          double want = base[s] + (t.bias ? bp[static_cast<size_t>(i / plane % out_channels)] : 0.0);
          want = activation_value(t.activation, static_cast<float>(want));
          if (t.residual) want += residual[s];
          want = activation_value(t.post, static_cast<float>(want));
          ASSERT_NEAR(y[s], want, 2e-6 * (magnitude[s] + 8.0) + 1e-6 * std::abs(want)) << "at " << i;
        }
      }
    }
  }
}

Conv2dGeometry depthwise(int64_t batch, int64_t channels, int64_t h, int64_t w, int64_t k, int64_t stride,
                         int64_t multiplier = 1) {
  return make_conv2d_geometry(batch, channels, h, w, channels * multiplier, k, k, stride, stride, k / 2, k / 2, 1, 1,
                              channels);
}

void check_all(std::mt19937& rng) {
  check("3x3 on 30x30 (bands of 28 and 2 rows), 13 out", depthwise(2, 16, 30, 30, 3, 1), 13, Activation::relu6, rng);
  check("3x3 stride 2 on 29x31, 19 channels, 40 out", depthwise(3, 19, 29, 31, 3, 2), 40, Activation::relu, rng);
  check("3x3 on 14x14, 40 channels, one image (bands for the threads)", depthwise(1, 40, 14, 14, 3, 1), 24,
        Activation::relu6, rng);
  check("3x3 on 56x9, 160 channels (bands of a few rows)", depthwise(2, 160, 56, 9, 3, 1), 17, Activation::relu6, rng);
  check("5x5 on 17x9, no activation", depthwise(2, 8, 17, 9, 5, 1), 8, Activation::none, rng);
  check("3x3, channel multiplier 2, sigmoid", depthwise(2, 6, 11, 13, 3, 1, 2), 5, Activation::sigmoid, rng);
  check("3x3 on 1x1", depthwise(3, 9, 1, 1, 3, 1), 7, Activation::relu6, rng);
  check("expanded 5 -> 16, 3x3 on 30x30", depthwise(2, 16, 30, 30, 3, 1), 13, Activation::relu6, rng, 5);
  check("expanded 9 -> 19, 3x3 stride 2 on 29x31", depthwise(3, 19, 29, 31, 3, 2), 40, Activation::relu, rng, 9);
  check("expanded 24 -> 160, 3x3 on 56x9 (bands of a few rows, expanded rows computed twice)",
        depthwise(2, 160, 56, 9, 3, 1), 17, Activation::relu6, rng, 24);
  check("expanded 3 -> 6, channel multiplier 2, 5x5", depthwise(2, 6, 11, 13, 5, 1, 2), 5, Activation::relu6, rng, 3);
  check("expanded 16 -> 48, 3x3 on 14x14, one image (bands of 4 rows for two threads, 6 expanded rows each)",
        depthwise(1, 48, 14, 14, 3, 1), 24, Activation::relu6, rng, 16);
  check("expanded 8 -> 40, 3x3 stride 2 on 28x28, one image", depthwise(1, 40, 28, 28, 3, 2), 16, Activation::relu6,
        rng, 8);
}

TEST(ConvDepthwisePointwise, MatchesDefinition) {
  std::mt19937 rng(51);
  check_all(rng);
}

TEST(ConvDepthwisePointwise, WithoutAvx512RunsPortableLoops) {
  const bool was = use_avx512();
  set_avx512_enabled(false);
  std::mt19937 rng(52);
  check_all(rng);
  set_avx512_enabled(was);
}

// The choice: MobileNetV2's blocks on planes of 14x14 and up, at batch 16 and 1, not the 7x7 ones.
TEST(ConvDepthwisePointwise, FusesWhereTheResultLeavesTheCaches) {
  if (!use_avx512()) GTEST_SKIP() << "the fused path is chosen with AVX-512 only";
  auto pair = [](int64_t batch, int64_t channels, int64_t size, int64_t stride, int64_t out) {
    const Conv2dGeometry dw = depthwise(batch, channels, size, size, 3, stride);
    return conv2d_depthwise_pointwise_fuses(
        dw, make_conv2d_geometry(batch, channels, dw.out_h, dw.out_w, out, 1, 1));
  };
  EXPECT_TRUE(pair(16, 144, 56, 1, 24));
  EXPECT_TRUE(pair(16, 96, 112, 2, 24));
  EXPECT_TRUE(pair(1, 144, 56, 1, 24));
  EXPECT_TRUE(pair(16, 576, 14, 1, 96));
  EXPECT_TRUE(pair(1, 384, 14, 1, 64));
  EXPECT_FALSE(pair(16, 960, 7, 1, 160));
  EXPECT_FALSE(pair(1, 576, 14, 2, 160));
  const Conv2dGeometry dw112 = depthwise(16, 96, 112, 112, 3, 2);
  EXPECT_TRUE(conv2d_expand_depthwise_pointwise_fuses(make_conv2d_geometry(16, 16, 112, 112, 96, 1, 1), dw112,
                                                      make_conv2d_geometry(16, 96, 56, 56, 24, 1, 1)));
  const Conv2dGeometry dw = depthwise(16, 144, 56, 56, 3, 1);
  EXPECT_FALSE(conv2d_depthwise_pointwise_fuses(dw, make_conv2d_geometry(16, 144, 56, 56, 24, 3, 3)));
}

}  // namespace depthwise_pointwise_test
}  // namespace tessera::kernels
