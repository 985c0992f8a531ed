// Winograd F(2x2, 3x3) and F(4x4, 3x3) (conv_winograd*.cpp) against a double-precision loop over the definition: odd
// and even planes (tiles cut by the plane's edge), padding 0, 1 and 2, rows of more than 16 tiles
// (several segments), channel counts off the 8-row blocks, chunks across images, one image's tile rows
// split over the threads, several runs of weight blocks per chunk, cropped outputs, every
// tail, weights packed per call, once, or in another algorithm's layout, one thread or two; and on a
// CPU (or with the switch) without AVX-512, the same request runs the other paths.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/conv_tails_check.h"

namespace tessera::kernels {
// Named: a unity batch shares its anonymous namespace with the other conv tests.
namespace winograd_test {

using conv_test::random_values;

// y = conv(x, w) in double, and sum |x w| per output (the scale of its rounding).
void reference(const Conv2dGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
               std::vector<double>& y, std::vector<double>& magnitude) {
  y.assign(static_cast<size_t>(g.batch * g.out_channels * g.out_h * g.out_w), 0.0);
  magnitude.assign(y.size(), 0.0);
  size_t i = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.out_channels; ++co)
      for (int64_t oh = 0; oh < g.out_h; ++oh)
        for (int64_t ow = 0; ow < g.out_w; ++ow, ++i)
          for (int64_t ci = 0; ci < g.in_channels; ++ci)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t ih = oh - g.pad_h + kh, iw = ow - g.pad_w + kw;
                if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
                const double p = static_cast<double>(x[static_cast<size_t>(((n * g.in_channels + ci) * g.in_h + ih) * g.in_w + iw)]) *
                                 w[static_cast<size_t>(((co * g.in_channels + ci) * 3 + kh) * 3 + kw)];
                y[i] += p;
                magnitude[i] += std::abs(p);
              }
}

void check(const char* name, const Conv2dGeometry& g, std::mt19937& rng, ConvAlgorithm algorithm) {
  const auto x = random_values(g.batch * g.in_channels * g.in_h * g.in_w, rng);
  const auto w = random_values(g.out_channels * g.in_channels * 9, rng);
  const auto bias = random_values(g.out_channels, rng);
  const int64_t ys = g.batch * g.out_channels * g.out_h * g.out_w;
  const auto residual = random_values(ys, rng, 3.0f);
  std::vector<double> base, magnitude;
  reference(g, x, w, base, magnitude);
  const std::vector<conv_test::Tail> tails = {{false, Activation::none, false, Activation::none, "none"},
                                              {true, Activation::relu, false, Activation::none, "bias relu"},
                                              {true, Activation::relu6, true, Activation::none, "bias relu6 residual"},
                                              {true, Activation::none, true, Activation::relu, "bias residual relu"},
                                              {false, Activation::sigmoid, true, Activation::tanh, "sigmoid residual tanh"}};
  // The transforms add and subtract up to 16 products' worth per term (F(2x2)), or weigh them by up to
  // 8 and 5 (F(4x4)): more roundings of the sum of |products| than the direct forms.
  const bool f2 = algorithm == ConvAlgorithm::winograd;
  conv_test::expect_tails_match(std::string(name) + (f2 ? " tile=2" : " tile=4"),
                                {g, x, w, bias, residual, base, magnitude}, algorithm, tails, f2 ? 4e-6 : 2e-5);
}

void check_all(std::mt19937& rng) {
  Conv2dGeometry cropped = make_conv2d_geometry(2, 20, 13, 12, 17, 3, 3, 1, 1, 1, 1);
  cropped.out_h -= 2;
  cropped.out_w -= 1;
  struct Case {
    const char* name;
    Conv2dGeometry g;
  };
  const Case cases[] = {
      {"7x7 planes (odd: the last tiles half outside), 3 images", make_conv2d_geometry(3, 24, 7, 7, 40, 3, 3, 1, 1, 1, 1)},
      {"even planes, channel counts off the blocks", make_conv2d_geometry(2, 19, 10, 8, 21, 3, 3, 1, 1, 1, 1)},
      {"unpadded", make_conv2d_geometry(2, 16, 9, 12, 16, 3, 3, 1, 1, 0, 0)},
      {"padding 2 (a larger output than input)", make_conv2d_geometry(1, 17, 6, 5, 18, 3, 3, 1, 1, 2, 2)},
      {"asymmetric padding", make_conv2d_geometry(2, 16, 9, 11, 24, 3, 3, 1, 1, 0, 2)},
      {"rows of more than 16 tiles (two and three segments)", make_conv2d_geometry(1, 16, 5, 71, 16, 3, 3, 1, 1, 1, 1)},
      {"rows of 4x4 tiles in two segments, planes of 10 rows", make_conv2d_geometry(1, 16, 10, 130, 8, 3, 3, 1, 1, 1, 1)},
      {"a few chunks of tile rows, across images", make_conv2d_geometry(3, 64, 22, 20, 24, 3, 3, 1, 1, 1, 1)},
      {"more chunks than are shared (each task transforms its own)",
       make_conv2d_geometry(4, 64, 40, 40, 16, 3, 3, 1, 1, 1, 1)},
      {"one column vector: grouped weight blocks", make_conv2d_geometry(1, 160, 4, 4, 72, 3, 3, 1, 1, 1, 1)},
      {"one image whose tile rows split into a chunk per thread (F(4x4): 25 tiles, 32 columns either way)",
       make_conv2d_geometry(1, 24, 20, 20, 40, 3, 3, 1, 1, 1, 1)},
      {"runs of weight blocks: more output channels than one run's products hold, one column vector",
       make_conv2d_geometry(1, 8, 4, 4, 404, 3, 3, 1, 1, 1, 1)},
      {"runs of weight blocks over chunks of two column vectors (28x28, one image)",
       make_conv2d_geometry(1, 16, 28, 28, 100, 3, 3, 1, 1, 1, 1)},
      {"1x1 planes", make_conv2d_geometry(2, 16, 1, 1, 16, 3, 3, 1, 1, 1, 1)},
      {"few channels", make_conv2d_geometry(2, 3, 8, 8, 5, 3, 3, 1, 1, 1, 1)},
      {"cropped output", cropped},
  };
  for (const Case& c : cases) {
    for (ConvAlgorithm algorithm : {ConvAlgorithm::winograd, ConvAlgorithm::winograd_4x4}) check(c.name, c.g, rng, algorithm);
  }
}

TEST(ConvWinograd, MatchesDefinition) {
  std::mt19937 rng(31);
  check_all(rng);
}

// Without AVX-512 the request runs the automatic choice's other paths, with the same results.
TEST(ConvWinograd, WithoutAvx512RunsOtherPaths) {
  const bool was = use_avx512();
  set_avx512_enabled(false);
  std::mt19937 rng(32);
  check_all(rng);
  set_avx512_enabled(was);
}

// The automatic choice on a ResNet-sized layer (Winograd where it applies) with weights packed for it.
TEST(ConvWinograd, AutomaticChoiceMatchesDefinition) {
  std::mt19937 rng(33);
  const Conv2dGeometry g = make_conv2d_geometry(2, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1);
  const auto x = random_values(g.batch * g.in_channels * g.in_h * g.in_w, rng);
  const auto w = random_values(g.out_channels * g.in_channels * 9, rng);
  std::vector<double> want, magnitude;
  reference(g, x, w, want, magnitude);
  std::vector<float> packed(static_cast<size_t>(conv2d_packed_weights_floats(g)));
  conv2d_pack_weights(g, w.data(), packed.data());
  std::vector<char> ws(static_cast<size_t>(conv2d_forward_workspace_bytes(g, nullptr, true)) + 1);
  std::vector<float> y(want.size());
  conv2d_forward(g, x.data(), w.data(), nullptr, y.data(), ws.data(), {}, nullptr, ConvAlgorithm::automatic,
                 packed.data());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 4e-6 * (magnitude[i] + 8.0)) << "at " << i;
}

}  // namespace winograd_test
}  // namespace tessera::kernels
