#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/gemm.h"

namespace tessera::kernels {
namespace {

struct GemmCase {
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad;  // extra elements per row: lda/ldb/ldc > minimum
  bool bias, residual;
  Activation act;
};

std::vector<float> random_gemm_values(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Independent oracle: triple loop in double over explicit index maps, then the epilogue formulas.
void check_case(const GemmCase& tc, runtime::ThreadPool& pool, std::mt19937& rng) {
  const int64_t a_rows = tc.ta ? tc.k : tc.m, a_cols = tc.ta ? tc.m : tc.k;
  const int64_t b_rows = tc.tb ? tc.n : tc.k, b_cols = tc.tb ? tc.k : tc.n;
  const int64_t lda = a_cols + tc.pad, ldb = b_cols + tc.pad, ldc = tc.n + tc.pad, ldr = tc.n + 2 * tc.pad;
  auto a = random_gemm_values(static_cast<size_t>(a_rows * lda), rng);
  auto b = random_gemm_values(static_cast<size_t>(b_rows * ldb), rng);
  auto c = random_gemm_values(static_cast<size_t>(tc.m * ldc), rng);
  auto bias = random_gemm_values(static_cast<size_t>(tc.n), rng);
  auto res = random_gemm_values(static_cast<size_t>(tc.m * ldr), rng);
  if (tc.beta == 0.0f) {  // C must not be read when beta == 0: fill it with NaN
    for (auto& x : c) x = std::nanf("");
  }
  const auto c_before = c;
  GemmEpilogue epi;
  epi.bias = tc.bias ? bias.data() : nullptr;
  epi.residual = tc.residual ? res.data() : nullptr;
  epi.ldr = ldr;
  epi.activation = tc.act;
  sgemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, tc.alpha, a.data(), lda, b.data(), ldb, tc.beta, c.data(), ldc, epi, &pool);
  for (int64_t i = 0; i < tc.m; ++i) {
    for (int64_t j = 0; j < tc.n + tc.pad; ++j) {
      const float got = c[static_cast<size_t>(i * ldc + j)];
      if (j >= tc.n) {  // padding columns are untouched
        const float before = c_before[static_cast<size_t>(i * ldc + j)];
        ASSERT_TRUE(got == before || (std::isnan(got) && std::isnan(before))) << "padding written at " << i << "," << j;
        continue;
      }
      double sum = 0.0, mag = 0.0;
      for (int64_t p = 0; p < tc.k; ++p) {
        const double av = tc.ta ? a[static_cast<size_t>(p * lda + i)] : a[static_cast<size_t>(i * lda + p)];
        const double bv = tc.tb ? b[static_cast<size_t>(j * ldb + p)] : b[static_cast<size_t>(p * ldb + j)];
        sum += av * bv;
        mag += std::abs(av * bv);
      }
      double want = tc.alpha * sum;
      if (tc.beta != 0.0f) want += tc.beta * static_cast<double>(c_before[static_cast<size_t>(i * ldc + j)]);
      if (tc.bias) want += bias[static_cast<size_t>(j)];
      want = activation_value(tc.act, static_cast<float>(want));
      if (tc.residual) want += res[static_cast<size_t>(i * ldr + j)];
      const double tol = 1e-5 * (std::abs(tc.alpha) * mag + 3.0) + 1e-5;
      ASSERT_NEAR(got, want, tol) << "C[" << i << "," << j << "] ta=" << tc.ta << " tb=" << tc.tb << " m=" << tc.m
                                  << " n=" << tc.n << " k=" << tc.k << " alpha=" << tc.alpha << " beta=" << tc.beta
                                  << " pad=" << tc.pad;
    }
  }
}

void run_shape_sweep(runtime::ThreadPool& pool) {
  std::mt19937 rng(1234);
  const int64_t sizes[][3] = {{1, 1, 1},     {1, 17, 5},    {3, 1, 9},    {1, 784, 100}, {2, 33, 70},
                              {4, 50, 8},    {5, 7, 300},   {6, 16, 1},   {7, 17, 33},   {13, 31, 257},
                              {64, 10, 256}, {37, 100, 64}, {100, 3, 20}, {65, 129, 3},  {181, 47, 513},
                              {16, 1000, 1280}};  // MobileNetV2's classifier at batch 16 (the small-m B^T path)
  for (const auto& s : sizes)
    for (int t = 0; t < 4; ++t)
      check_case({(t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], 1.0f, 0.0f, 0, false, false, Activation::none}, pool,
                 rng);
}

TEST(Sgemm, ShapesAndTransposesOneThread) {
  runtime::ThreadPool pool(1);
  run_shape_sweep(pool);
}

TEST(Sgemm, ShapesAndTransposesTwoThreads) {
  runtime::ThreadPool pool(2);
  run_shape_sweep(pool);
}

TEST(Sgemm, PortableFallbackMatches) {
  set_avx2_enabled(false);
  runtime::ThreadPool pool(2);
  run_shape_sweep(pool);
  set_avx2_enabled(true);
}

TEST(Sgemm, AlphaBetaStridesAndEpilogues) {
  runtime::ThreadPool pool(2);
  std::mt19937 rng(99);
  const Activation acts[] = {Activation::none, Activation::relu,    Activation::gelu, Activation::gelu_tanh,
                             Activation::silu, Activation::sigmoid, Activation::tanh};
  int index = 0;
  for (Activation act : acts) {
    for (int t = 0; t < 4; ++t) {
      for (const auto& s : {std::array<int64_t, 3>{3, 40, 17}, std::array<int64_t, 3>{16, 41, 33},
                            std::array<int64_t, 3>{29, 45, 70}}) {
        const float alpha = index % 3 == 0 ? 1.0f : -0.75f;
        const float beta = index % 2 == 0 ? 0.0f : 0.5f;
        check_case({(t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], alpha, beta, 3 + index % 5, index % 2 == 0,
                    index % 3 != 1, act},
                   pool, rng);
        ++index;
      }
    }
  }
}

// One row of A times B^T (batch-1 inference: y = W x with W stored [n, k]) has its own kernel: eight
// columns at a time with bias and relu applied in registers. Column counts around 8 and 64 (the
// per-thread block) and k around 8 exercise the tails.
TEST(Sgemm, SingleRowTimesBTransposed) {
  std::mt19937 rng(31);
  const Activation acts[] = {Activation::none, Activation::relu, Activation::gelu};
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    int index = 0;
    for (int64_t n : {1, 5, 8, 13, 64, 67, 200, 1024})
      for (int64_t k : {1, 7, 8, 9, 33, 784}) {
        const Activation act = acts[index % 3];
        const bool fused_shape = index % 4 != 3;  // alpha = 1, beta = 0: the in-register epilogue
        const float alpha = fused_shape ? 1.0f : -0.5f, beta = fused_shape ? 0.0f : 0.25f;
        check_case({index % 5 == 4, true, 1, n, k, alpha, beta, index % 3, index % 2 == 0, index % 7 == 6, act}, pool,
                   rng);
        ++index;
      }
  }
}

// The in-register bias + relu gives the same bits as a GEMM followed by the scalar epilogue, keeps
// NaN as the scalar relu does, and leaves columns past n alone.
TEST(Sgemm, SingleRowFusedEpilogueIsBitExact) {
  if (!use_avx2()) GTEST_SKIP() << "no AVX2: the fused single-row kernel is not used";
  std::mt19937 rng(5);
  const int64_t n = 77, k = 300;
  auto x = random_gemm_values(static_cast<size_t>(k), rng);
  auto w = random_gemm_values(static_cast<size_t>(n * k), rng);
  auto bias = random_gemm_values(static_cast<size_t>(n), rng);
  bias[3] = std::nanf("");
  bias[10] = 1e6f;  // a column far from zero either way
  bias[11] = -1e6f;
  std::vector<float> plain(static_cast<size_t>(n + 1), 7.0f), fused(static_cast<size_t>(n + 1), 7.0f);
  runtime::ThreadPool pool(2);
  sgemm(false, true, 1, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, plain.data(), n, {}, &pool);
  for (int64_t j = 0; j < n; ++j) {
    float& v = plain[static_cast<size_t>(j)];
    v += bias[static_cast<size_t>(j)];
    v = v < 0.0f ? 0.0f : v;
  }
  GemmEpilogue epi;
  epi.bias = bias.data();
  epi.activation = Activation::relu;
  sgemm(false, true, 1, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, fused.data(), n, epi, &pool);
  for (int64_t j = 0; j < n; ++j) {
    const float p = plain[static_cast<size_t>(j)], f = fused[static_cast<size_t>(j)];
    EXPECT_EQ(std::memcmp(&p, &f, sizeof(float)), 0) << "column " << j << ": " << p << " vs " << f;
  }
  EXPECT_TRUE(std::isnan(fused[3]));
  EXPECT_GT(fused[10], 0.0f);
  EXPECT_EQ(fused[11], 0.0f);
  EXPECT_EQ(fused[static_cast<size_t>(n)], 7.0f);
}

TEST(Sgemm, BetaOneAccumulatesAndLargeK) {
  runtime::ThreadPool pool(2);
  std::mt19937 rng(7);
  check_case({false, false, 50, 70, 1000, 1.0f, 1.0f, 1, false, false, Activation::none}, pool, rng);
  check_case({true, true, 50, 70, 600, 2.0f, -1.0f, 0, true, true, Activation::relu}, pool, rng);
}

TEST(Sgemm, LargeSquareBothProviders) {
  runtime::ThreadPool pool(2);
  std::mt19937 rng(5);
  const GemmProvider before = gemm_provider();
  set_gemm_provider(GemmProvider::tessera);
  check_case({false, false, 300, 3100, 70, 1.0f, 0.0f, 0, true, false, Activation::relu}, pool, rng);
  check_case({false, true, 200, 260, 530, 1.0f, 0.0f, 2, false, false, Activation::none}, pool, rng);
  if (openblas_available()) {
    set_gemm_provider(GemmProvider::openblas);
    EXPECT_EQ(gemm_provider_name(), "openblas");
    check_case({true, false, 70, 90, 110, 0.5f, 0.25f, 1, true, true, Activation::silu}, pool, rng);
  } else {
    EXPECT_THROW(set_gemm_provider(GemmProvider::openblas), Error);
  }
  set_gemm_provider(before);
}

TEST(Sgemm, ZeroSizesAndZeroK) {
  runtime::ThreadPool pool(2);
  std::vector<float> c = {1, 2, 3, 4, 5, 6};
  // k == 0: C = beta * C, then the epilogue.
  const std::vector<float> bias = {10, 20, 30};
  GemmEpilogue epi;
  epi.bias = bias.data();
  sgemm(false, false, 2, 3, 0, 1.0f, nullptr, 1, nullptr, 3, 2.0f, c.data(), 3, epi, &pool);
  EXPECT_EQ(c, (std::vector<float>{12, 24, 36, 18, 30, 42}));
  // m == 0 and n == 0: nothing happens.
  sgemm(false, false, 0, 3, 4, 1.0f, nullptr, 4, nullptr, 3, 0.0f, nullptr, 3, {}, &pool);
  sgemm(false, false, 2, 0, 4, 1.0f, nullptr, 4, nullptr, 1, 0.0f, nullptr, 1, {}, &pool);
  // alpha == 0 with beta == 0 zeroes C without reading A or B.
  std::vector<float> d(4, std::nanf(""));
  sgemm(false, false, 2, 2, 3, 0.0f, nullptr, 3, nullptr, 2, 0.0f, d.data(), 2, {}, &pool);
  EXPECT_EQ(d, (std::vector<float>{0, 0, 0, 0}));
}

TEST(Sgemm, RejectsBadLeadingDimensions) {
  std::vector<float> a(12), b(12), c(12);
  EXPECT_THROW(sgemm(false, false, 3, 4, 3, 1.0f, a.data(), 2, b.data(), 4, 0.0f, c.data(), 4), Error);
  EXPECT_THROW(sgemm(false, false, 3, 4, 3, 1.0f, a.data(), 3, b.data(), 4, 0.0f, c.data(), 3), Error);
  EXPECT_THROW(sgemm(false, true, 3, 4, 3, 1.0f, a.data(), 3, b.data(), 2, 0.0f, c.data(), 4), Error);
  EXPECT_THROW(sgemm(false, false, -1, 4, 3, 1.0f, a.data(), 3, b.data(), 4, 0.0f, c.data(), 4), Error);
}

TEST(Sgemm, HandComputedValue) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};     // 2x3
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};  // 3x2
  std::vector<float> c(4);
  sgemm(false, false, 2, 2, 3, 1.0f, a.data(), 3, b.data(), 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{58, 64, 139, 154}));
}

TEST(Dgemm, MatchesTripleLoop) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> d(-1, 1);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      const int64_t m = 19, n = 23, k = 31, pad = 2;
      const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
      std::vector<double> a(static_cast<size_t>((ta ? k : m) * lda)), b(static_cast<size_t>((tb ? n : k) * ldb)),
          c(static_cast<size_t>(m * ldc));
      for (auto& x : a) x = d(rng);
      for (auto& x : b) x = d(rng);
      for (auto& x : c) x = d(rng);
      const auto c0 = c;
      dgemm(ta, tb, m, n, k, 1.5, a.data(), lda, b.data(), ldb, -0.5, c.data(), ldc, &pool);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += (ta ? a[static_cast<size_t>(p * lda + i)] : a[static_cast<size_t>(i * lda + p)]) *
                 (tb ? b[static_cast<size_t>(j * ldb + p)] : b[static_cast<size_t>(p * ldb + j)]);
          ASSERT_NEAR(c[static_cast<size_t>(i * ldc + j)], 1.5 * s - 0.5 * c0[static_cast<size_t>(i * ldc + j)], 1e-12);
        }
    }
  }
}

}  // namespace
}  // namespace tessera::kernels
