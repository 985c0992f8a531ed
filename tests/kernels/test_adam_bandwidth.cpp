#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tessera/api/tensor.h"
#include "tessera/core/error.h"
#include "tessera/kernels/cpu/adam.h"
#include "tessera/kernels/cpu/bandwidth.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/optim/adam.h"

namespace tessera::kernels {
namespace {

std::vector<float> random_floats(int64_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

// Three steps of the fused kernel against optim::Adam / optim::AdamW (the reference backend) on
// the same parameters and gradients: the kernel must reproduce the optimiser's math.
void check_against_optimizer(bool decoupled, double weight_decay) {
  std::mt19937 rng(41);
  const std::vector<int64_t> sizes = {37, 1, 300};
  std::vector<std::vector<float>> p, m, v;
  std::vector<Tensor> params;
  for (int64_t n : sizes) {
    p.push_back(random_floats(n, rng));
    m.emplace_back(static_cast<size_t>(n), 0.0f);
    v.emplace_back(static_cast<size_t>(n), 0.0f);
    params.push_back(Tensor::from_vector(p.back(), {n}));
  }
  std::vector<Tensor*> ptrs;
  for (auto& t : params) ptrs.push_back(&t);
  optim::AdamOptions opts;
  opts.lr = 0.01;
  opts.weight_decay = weight_decay;
  std::unique_ptr<optim::Optimizer> opt;
  if (decoupled) {
    opt = std::make_unique<optim::AdamW>(ptrs, optim::AdamWOptions{.lr = opts.lr, .weight_decay = opts.weight_decay});
  } else {
    opt = std::make_unique<optim::Adam>(ptrs, opts);
  }
  runtime::ThreadPool pool(2);
  for (int step = 1; step <= 3; ++step) {
    std::vector<std::vector<float>> g;
    std::vector<Tensor> grads;
    std::vector<AdamTensor> tensors;
    for (size_t i = 0; i < sizes.size(); ++i) {
      g.push_back(random_floats(sizes[i], rng));
      grads.push_back(Tensor::from_vector(g.back(), {sizes[i]}));
    }
    for (size_t i = 0; i < sizes.size(); ++i)
      tensors.push_back(
          {sizes[i], p[i].data(), g[i].data(), m[i].data(), v[i].data(), p[i].data(), m[i].data(), v[i].data()});
    AdamHyper h;
    h.lr = opts.lr;
    h.weight_decay = weight_decay;
    h.decoupled = decoupled;
    h.step = step;
    adam_update_many(h, tensors.data(), static_cast<int64_t>(tensors.size()), &pool);
    opt->step(grads);
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto want = params[i].to_vector<float>();
      for (size_t j = 0; j < want.size(); ++j)
        ASSERT_NEAR(p[i][j], want[j], 1e-6) << "step " << step << " tensor " << i << " element " << j;
    }
  }
}

TEST(Adam, MatchesOptimizer) {
  check_against_optimizer(false, 0.0);
}
TEST(Adam, MatchesOptimizerWithL2) {
  check_against_optimizer(false, 0.1);
}
TEST(AdamW, MatchesOptimizerWithDecoupledDecay) {
  check_against_optimizer(true, 0.1);
}

TEST(Adam, OneStepByHand) {
  // First step: m = 0.1 g, v = 0.001 g^2, bc1 = 0.1, bc2 = 0.001 -> p -= lr * g / (|g| + eps').
  float p = 1.0f, g = 0.5f, m = 0.0f, v = 0.0f;
  AdamHyper h;
  h.lr = 0.1;
  h.eps = 0.0;
  adam_update(h, {1, &p, &g, &m, &v, &p, &m, &v});
  EXPECT_NEAR(p, 0.9f, 1e-6);
  EXPECT_NEAR(m, 0.05f, 1e-7);
  EXPECT_NEAR(v, 0.00025f, 1e-9);
  h.step = 0;
  EXPECT_THROW(adam_update(h, {1, &p, &g, &m, &v, &p, &m, &v}), Error);
}

void check_streaming(int64_t n) {
  std::mt19937 rng(42);
  const auto a = random_floats(n, rng), b = random_floats(n, rng), c = random_floats(n, rng);
  std::vector<float> out(static_cast<size_t>(n) + 1);
  runtime::ThreadPool pool(2);
  // Offset by one float so the destination is misaligned and the scalar head runs.
  stream_triad(n, out.data() + 1, b.data(), c.data(), 3.0f, &pool);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[static_cast<size_t>(i) + 1], b[i] + 3.0f * c[i], 1e-6);
  fused_relu_axpb(n, a.data(), b.data(), c.data(), out.data(), &pool);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[static_cast<size_t>(i)], std::max(a[i] * b[i] + c[i], 0.0f), 1e-6);
  fused_relu_axpb_scalar(n, -2.0f, a.data(), 0.5f, out.data(), &pool);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[static_cast<size_t>(i)], std::max(-2.0f * a[i] + 0.5f, 0.0f), 1e-6);
  // The read pass sums 64-bit words with wrap-around; start one word in so the vector loop is unaligned.
  std::vector<uint64_t> words(static_cast<size_t>(n) + 1);
  std::mt19937_64 bits(7);
  uint64_t expected = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    words[i] = bits();
    if (i > 0) expected += words[i];
  }
  EXPECT_EQ(stream_read_sum(n, words.data() + 1, &pool), expected) << "n = " << n;
}

TEST(Bandwidth, KernelsComputeTheirFormulas) {
  for (int64_t n : {0, 1, 7, 8, 1000, 100003}) check_streaming(n);
  check_streaming(int64_t{4} << 20);  // large enough for non-temporal stores
  set_avx2_enabled(false);
  check_streaming(1001);
  set_avx2_enabled(true);
}

}  // namespace
}  // namespace tessera::kernels
