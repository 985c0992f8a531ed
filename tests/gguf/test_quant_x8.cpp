// The x8 weight layout (eight rows interleaved, kernels/quant/interleave_x8.h) and the kernels on it:
// the layout is a lossless permutation of the GGUF bytes, and products on it agree with the exact
// product of the quantized activations and the dequantized weights, on the AVX2 and portable paths.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "quant_kernel_test_util.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "test_util.h"

namespace tessera::test {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(QuantX8, SixBitTableFillsEveryPositionOnce) {
  std::vector<int> seen(64, 0);
  for (int g = 0; g < 8; ++g) {
    for (int r = 0; r < 8; ++r) {
      const int p = qk::x8_six_bit_position(g, r);
      ASSERT_TRUE(p >= 0 && p < 64) << g << " " << r;
      ++seen[static_cast<size_t>(p)];
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 64);
}

// Any bytes are valid Q4_0/Q8_0/Q4_K blocks; interleaving moves them without loss and changes the order.
TEST(QuantX8, InterleaveRoundTripsEveryByte) {
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k}) {
    SCOPED_TRACE(quant::type_name(type));
    const int64_t n = 16, k = 512;
    const std::vector<uint8_t> rows = random_bytes(static_cast<size_t>(n * quant::row_bytes(type, k)), 1);
    std::vector<uint8_t> x8(rows.size()), back(rows.size());
    qk::interleave_x8(type, rows.data(), n, k, x8.data());
    EXPECT_NE(x8, rows);
    qk::deinterleave_x8(type, x8.data(), n, k, back.data());
    EXPECT_EQ(back, rows);
  }
}

// Each interleaved block starts with the eight rows' f16 scales d, row r's at bytes 2r and 2r + 1.
TEST(QuantX8, ScalesOfTheEightRowsLeadEachBlock) {
  const int64_t n = 8;
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k}) {
    const int64_t kk = type == GgmlType::q4_k ? 256 : 64;
    const std::vector<float> wf = gaussian(static_cast<size_t>(n * kk), 4, 1.0f);
    const std::vector<uint8_t> rows = quant::quantize(type, wf.data(), n, kk);
    std::vector<uint8_t> x8(rows.size());
    qk::interleave_x8(type, rows.data(), n, kk, x8.data());
    const int64_t row = quant::row_bytes(type, kk);
    for (int r = 0; r < 8; ++r) {
      EXPECT_EQ(x8[2 * r], rows[r * row]) << r;
      EXPECT_EQ(x8[2 * r + 1], rows[r * row + 1]) << r;
    }
  }
}

void check_x8(GgmlType type, int64_t m, int64_t n, int64_t k, bool avx2, bool vnni = true) {
  SCOPED_TRACE(std::string(quant::type_name(type)) + " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" +
               std::to_string(k) + (avx2 ? (vnni && kernels::use_avx512_vnni() ? " vnni" : " avx2") : " portable"));
  KernelPaths paths(avx2, vnni);
  const std::vector<float> wf = gaussian(static_cast<size_t>(n * k), 10 + m, 0.05f);
  const std::vector<float> x = gaussian(static_cast<size_t>(m * k), 20 + n, 1.0f);
  const std::vector<uint8_t> w = quant::quantize(type, wf.data(), n, k);
  std::vector<uint8_t> w8(w.size());
  qk::interleave_x8(type, w.data(), n, k, w8.data());
  std::vector<float> y(static_cast<size_t>(m * n), -1.0f), plain(y.size());
  qk::quantized_matmul_x8(type, w8.data(), n, k, x.data(), m, y.data());
  qk::quantized_matmul(type, w.data(), n, k, x.data(), m, plain.data());
  const std::vector<double> want = expected(type, w, x, m, n, k);
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  const double tol = 2e-5 * (scale + 1.0);
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], want[i], tol) << "element " << i;
    ASSERT_NEAR(y[i], plain[i], tol) << "element " << i;
  }
}

void check_x8_shapes(bool vnni) {
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k}) {
    // Prefill: rows in fours over pairs of groups, the rest one by one.
    for (int64_t m : {1, 2, 3, 4, 5, 9}) check_x8(type, m, 24, 512, true, vnni);
    for (int64_t n : {8, 136, 520}) check_x8(type, 1, n, 256, true, vnni);
    // Enough groups for decode's stripes (four groups at once), with one group left over.
    check_x8(type, 1, 2056, 256, true, vnni);
    check_x8(type, 1, 64, 2048, true, vnni);
  }
}

// The AVX2 kernels, also where the CPU has AVX-512 VNNI (they are switched off for this test).
TEST(QuantX8, MatchesTheExactProductOnAvx2) {
  if (!kernels::use_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  check_x8_shapes(false);
}

TEST(QuantX8, MatchesTheExactProductOnAvx512Vnni) {
  if (!kernels::use_avx512_vnni()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI (or TESSERA_NO_AVX512 is set)";
  check_x8_shapes(true);
}

TEST(QuantX8, MatchesTheExactProductWithoutAvx2) {
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k}) {
    for (int64_t m : {1, 3, 6}) check_x8(type, m, 16, 256, false);
  }
}

// On CPUs with AVX-512 VNNI the Q4_K kernel adds its integer sums exactly as AVX2's and scales them
// with the same float operations, so its results must be bit-identical (Q4_0 and Q8_0 accumulate their
// vector halves apart and round differently; the test above covers them).
TEST(QuantX8, VnniQ4KIsBitIdenticalToAvx2) {
  if (!kernels::use_avx512_vnni()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI (or TESSERA_NO_AVX512 is set)";
  const GgmlType type = GgmlType::q4_k;
  for (const int64_t m : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE(std::string(quant::type_name(type)) + " m=" + std::to_string(m));
    const int64_t n = 2056, k = 512;  // decode's four stripes with a group left over
    const std::vector<float> wf = gaussian(static_cast<size_t>(n * k), 30 + m, 0.05f);
    const std::vector<float> x = gaussian(static_cast<size_t>(m * k), 40 + m, 1.0f);
    const std::vector<uint8_t> w = quant::quantize(type, wf.data(), n, k);
    std::vector<uint8_t> w8(w.size());
    qk::interleave_x8(type, w.data(), n, k, w8.data());
    std::vector<float> vnni(static_cast<size_t>(m * n)), avx2(vnni.size());
    qk::quantized_matmul_x8(type, w8.data(), n, k, x.data(), m, vnni.data());
    kernels::set_avx512_vnni_enabled(false);
    qk::quantized_matmul_x8(type, w8.data(), n, k, x.data(), m, avx2.data());
    kernels::set_avx512_vnni_enabled(true);
    ASSERT_EQ(vnni, avx2);
  }
}

// Full-range codes: the eight 16-bit partial sums per lane must not saturate.
TEST(QuantX8, ExtremeBlocksDoNotOverflow) {
  const int64_t n = 8, k = 256;
  std::vector<float> wf(static_cast<size_t>(n * k)), x(static_cast<size_t>(k));
  for (int64_t i = 0; i < n * k; ++i) wf[i] = (i % 2 ? 1.0f : -1.0f) * (i < k ? 0.0f : 1.0f);
  for (int64_t i = 0; i < k; ++i) x[i] = i % 2 ? 1.0f : -1.0f;
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k}) {
    const std::vector<uint8_t> w = quant::quantize(type, wf.data(), n, k);
    std::vector<uint8_t> w8(w.size());
    qk::interleave_x8(type, w.data(), n, k, w8.data());
    std::vector<float> y(static_cast<size_t>(n));
    qk::quantized_matmul_x8(type, w8.data(), n, k, x.data(), 1, y.data());
    const std::vector<double> want = expected(type, w, x, 1, n, k);
    EXPECT_EQ(y[0], 0.0f) << quant::type_name(type);
    for (int64_t j = 1; j < n; ++j) {
      EXPECT_NEAR(y[j], want[j], 1e-3) << quant::type_name(type);
      EXPECT_GT(y[j], 200.0f) << quant::type_name(type);
    }
  }
}

TEST(QuantX8, RejectsOtherTypesAndRowCounts) {
  std::vector<uint8_t> w(1 << 16);
  std::vector<float> x(256), y(16);
  EXPECT_TESSERA_ERROR(qk::quantized_matmul_x8(GgmlType::q6_k, w.data(), 8, 256, x.data(), 1, y.data()),
                       "Q4_0, Q8_0 or Q4_K", "q6_k");
  EXPECT_TESSERA_ERROR(qk::quantized_matmul_x8(GgmlType::q4_0, w.data(), 12, 256, x.data(), 1, y.data()), "12 rows");
  EXPECT_TESSERA_ERROR(qk::interleave_x8(GgmlType::q6_k, w.data(), 8, 256, w.data()), "no x8 layout for q6_k");
  EXPECT_TESSERA_ERROR(qk::interleave_x8(GgmlType::q4_k, w.data(), 7, 256, w.data()), "7 rows are not a multiple of 8");
  EXPECT_FALSE(qk::can_interleave_x8(GgmlType::q4_k, 12));
  EXPECT_TRUE(qk::can_interleave_x8(GgmlType::q4_k, 16));
}

}  // namespace
}  // namespace tessera::test
