// Pointwise convolutions by pixel vectors (conv_pointwise*.cpp) against a double-precision product:
// planes cut by the 48-pixel tiles (one, two and three vectors, masked) and into spans, channel counts off the
// 8-row blocks, every tail, weights packed per call, once, or in another algorithm's layout, one
// thread or two; without AVX-512 the same request runs the other paths.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/conv.h"
#include "tessera/kernels/cpu/cpu_features.h"

namespace tessera::kernels {
// Named: a unity batch shares its anonymous namespace with the other conv tests.
namespace pointwise_test {

std::vector<float> random_values(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

enum class Packing { per_call, once, other_layout };

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
  struct Tail {
    bool bias;
    Activation activation;
    bool residual;
    Activation post;
    const char* name;
  };
  const Tail tails[] = {{false, Activation::none, false, Activation::none, "none"},
                        {true, Activation::relu6, false, Activation::none, "bias relu6"},
                        {true, Activation::none, true, Activation::relu, "bias residual relu"},
                        {false, Activation::sigmoid, true, Activation::tanh, "sigmoid residual tanh"}};
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const Tail& t : tails) {
      for (Packing packing : {Packing::per_call, Packing::once, Packing::other_layout}) {
        ConvEpilogue e;
        e.activation = t.activation;
        e.residual = t.residual ? residual.data() : nullptr;
        e.post_activation = t.post;
        std::vector<float> packed;
        if (packing != Packing::per_call) {
          packed.resize(static_cast<size_t>(conv2d_packed_weights_floats(g)));
          conv2d_pack_weights(g, w.data(), packed.data(), &pool,
                              packing == Packing::once ? ConvAlgorithm::pointwise_rows : ConvAlgorithm::implicit_gemm);
        }
        const bool prepacked = packing != Packing::per_call;
        std::vector<char> ws(static_cast<size_t>(conv2d_forward_workspace_bytes(g, &pool, prepacked)));
        std::vector<float> y(static_cast<size_t>(ys), std::nanf(""));
        conv2d_forward(g, x.data(), w.data(), t.bias ? bias.data() : nullptr, y.data(), ws.empty() ? nullptr : ws.data(),
                       e, &pool, ConvAlgorithm::pointwise_rows, prepacked ? packed.data() : nullptr);
        SCOPED_TRACE(testing::Message() << name << " avx512=" << use_avx512() << " threads=" << threads
                                        << " tail=" << t.name << " packing=" << static_cast<int>(packing));
        for (int64_t i = 0; i < ys; ++i) {
          const auto s = static_cast<size_t>(i);
          double want = base[s] + (t.bias ? bias[static_cast<size_t>(i / plane % g.out_channels)] : 0.0);
          want = activation_value(t.activation, static_cast<float>(want));
          if (t.residual) want += residual[s];
          want = activation_value(t.post, static_cast<float>(want));
          ASSERT_NEAR(y[s], want, 1e-6 * (magnitude[s] + 8.0) + 1e-6 * std::abs(want)) << "at " << i;
        }
      }
    }
  }
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
