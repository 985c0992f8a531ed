#pragma once
// What the convolution algorithm tests (test_conv_winograd.cpp, test_conv_pointwise.cpp) share: random
// inputs, and one algorithm run under every epilogue tail, weight packing and thread count against a
// double-precision convolution computed by the test.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/conv.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels::conv_test {

inline std::vector<float> random_values(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

struct Tail {
  bool bias;
  Activation activation;
  bool residual;
  Activation post;
  const char* name;
};

// The inputs of one case and the convolution without its tail (`base`, in double), with the sum of
// |products| per output (`magnitude`: the scale of its rounding).
struct ConvCase {
  const Conv2dGeometry& g;
  const std::vector<float>& x;
  const std::vector<float>& w;
  const std::vector<float>& bias;
  const std::vector<float>& residual;
  const std::vector<double>& base;
  const std::vector<double>& magnitude;
};

// Runs `algorithm` on the case under each tail, with weights packed per call, once for it, or in the
// implicit GEMM's layout, on one thread and two; every output within scale * (magnitude + 8) + 1e-6 |want|.
inline void expect_tails_match(const std::string& name, const ConvCase& c, ConvAlgorithm algorithm,
                               const std::vector<Tail>& tails, double scale) {
  enum class Packing { per_call, once, other_layout };
  const Conv2dGeometry& g = c.g;
  const int64_t plane = g.out_h * g.out_w, ys = g.batch * g.out_channels * plane;
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const Tail& t : tails) {
      for (Packing packing : {Packing::per_call, Packing::once, Packing::other_layout}) {
        ConvEpilogue e;
        e.activation = t.activation;
        e.residual = t.residual ? c.residual.data() : nullptr;
        e.post_activation = t.post;
        std::vector<float> packed;
        if (packing != Packing::per_call) {
          packed.resize(static_cast<size_t>(conv2d_packed_weights_floats(g)));
          conv2d_pack_weights(g, c.w.data(), packed.data(), &pool,
                              packing == Packing::once ? algorithm : ConvAlgorithm::implicit_gemm);
        }
        const bool prepacked = packing != Packing::per_call;
        std::vector<char> ws(static_cast<size_t>(conv2d_forward_workspace_bytes(g, &pool, prepacked)));
        std::vector<float> y(static_cast<size_t>(ys), std::nanf(""));
        conv2d_forward(g, c.x.data(), c.w.data(), t.bias ? c.bias.data() : nullptr, y.data(),
                       ws.empty() ? nullptr : ws.data(), e, &pool, algorithm, prepacked ? packed.data() : nullptr);
        SCOPED_TRACE(testing::Message() << name << " avx512=" << use_avx512() << " threads=" << threads
                                        << " tail=" << t.name << " packing=" << static_cast<int>(packing));
        for (int64_t i = 0; i < ys; ++i) {
          const auto s = static_cast<size_t>(i);
          double want = c.base[s] + (t.bias ? c.bias[static_cast<size_t>(i / plane % g.out_channels)] : 0.0);
          want = activation_value(t.activation, static_cast<float>(want));
          if (t.residual) want += c.residual[s];
          want = activation_value(t.post, static_cast<float>(want));
          ASSERT_NEAR(y[s], want, scale * (c.magnitude[s] + 8.0) + 1e-6 * std::abs(want)) << "at " << i;
        }
      }
    }
  }
}

}  // namespace tessera::kernels::conv_test
