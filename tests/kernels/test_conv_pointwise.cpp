// Pointwise convolutions by pixel vectors (conv_pointwise*.cpp) against a double-precision product:
// planes cut by the 48-pixel tiles (one, two and three vectors, masked) and into spans, channel counts off the
// 8-row blocks, every tail, weights packed per call, once, or in another algorithm's layout, one
// thread or two; without AVX-512 the same request runs the other paths.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/conv_tails_check.h"

namespace tessera::kernels {
// Named: a unity batch shares its anonymous namespace with the other conv tests.
namespace pointwise_test {

using conv_test::random_values;

void check(const char* name, const Conv2dGeometry& g, std::mt19937& rng) {
  const int64_t plane = g.out_h * g.out_w, ys = g.batch * g.out_channels * plane;
  const auto x = random_values(g.batch * g.in_channels * plane, rng);
  const auto w = random_values(g.out_channels * g.in_channels, rng);
  const auto bias = random_values(g.out_channels, rng);
  const auto residual = random_values(ys, rng, 3.0f);
  std::vector<double> base(static_cast<size_t>(ys)), magnitude(static_cast<size_t>(ys));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.out_channels; ++co)
      for (int64_t p = 0; p < plane; ++p) {
        double sum = 0, mag = 0;
        for (int64_t ci = 0; ci < g.in_channels; ++ci) {
          const double t = static_cast<double>(w[static_cast<size_t>(co * g.in_channels + ci)]) *
                           x[static_cast<size_t>((n * g.in_channels + ci) * plane + p)];
          sum += t;
          mag += std::abs(t);
        }
        base[static_cast<size_t>((n * g.out_channels + co) * plane + p)] = sum;
        magnitude[static_cast<size_t>((n * g.out_channels + co) * plane + p)] = mag;
      }
  const std::vector<conv_test::Tail> tails = {{false, Activation::none, false, Activation::none, "none"},
                                              {true, Activation::relu6, false, Activation::none, "bias relu6"},
                                              {true, Activation::none, true, Activation::relu, "bias residual relu"},
                                              {false, Activation::sigmoid, true, Activation::tanh, "sigmoid residual tanh"}};
  conv_test::expect_tails_match(name, {g, x, w, bias, residual, base, magnitude}, ConvAlgorithm::pointwise_rows, tails,
                                1e-6);
}

void check_all(std::mt19937& rng) {
  check("plane of 35 (one vector, masked), 13 channels out", make_conv2d_geometry(3, 16, 5, 7, 13, 1, 1), rng);
  check("plane of 100 (two tiles and a vector)", make_conv2d_geometry(2, 24, 10, 10, 24, 1, 1), rng);
  check("plane of 77, 3 channels in", make_conv2d_geometry(2, 3, 7, 11, 17, 1, 1), rng);
  check("plane of 1", make_conv2d_geometry(5, 32, 1, 1, 9, 1, 1), rng);
  check("planes of 784, 40 -> 96", make_conv2d_geometry(2, 40, 28, 28, 96, 1, 1), rng);
  check("planes of 900 in two spans of pixels", make_conv2d_geometry(2, 40, 30, 30, 20, 1, 1), rng);
  check("planes of 784 in two spans, 64 -> 24", make_conv2d_geometry(1, 64, 28, 28, 24, 1, 1), rng);
}

TEST(ConvPointwise, MatchesDefinition) {
  std::mt19937 rng(41);
  check_all(rng);
}

TEST(ConvPointwise, WithoutAvx512RunsOtherPaths) {
  const bool was = use_avx512();
  set_avx512_enabled(false);
  std::mt19937 rng(42);
  check_all(rng);
  set_avx512_enabled(was);
}

}  // namespace pointwise_test
}  // namespace tessera::kernels
