// The CPU quantized-matmul kernels. They quantize the activations, so they are checked against the
// exact product of the *quantized* activations with the dequantized weights (agreement to float
// rounding), for every weight type, on both the AVX2 and the portable paths, for row counts that
// exercise the 1-4 row kernels, the four-stripe decode kernels and the tiling.
#include <cmath>
#include <random>

#include "quant_kernel_test_util.h"
#include "tessera/core/half.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/quant/dot.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quantize.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::quant;
using tessera::test::Avx2Switch;
using tessera::test::expected;
using tessera::test::gaussian;
using tessera::test::KernelPaths;
namespace qk = tessera::kernels::quant;

namespace {

void check_type(GgmlType type, int64_t m, int64_t n, int64_t k, bool avx2, bool vnni = true) {
  KernelPaths paths(avx2, vnni);
  const std::vector<float> wf = gaussian(static_cast<size_t>(n * k), 100 + m, 0.05f);
  const std::vector<float> x = gaussian(static_cast<size_t>(m * k), 200 + n, 1.0f);
  const std::vector<uint8_t> w = quantize(type, wf.data(), n, k);
  std::vector<float> y(static_cast<size_t>(m * n), -1.0f);
  qk::quantized_matmul(type, w.data(), n, k, x.data(), m, y.data());
  const std::vector<double> want = expected(type, w, x, m, n, k);
  // Q8_1's stored activation sum s is rounded to f16, which Q4_1/Q5_1 use for the offset term.
  const bool f16_sum = qk::activation_type(type) == GgmlType::q8_1;
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  const double tol = (f16_sum ? 2e-3 : 2e-5) * (scale + 1.0);
  int bad = 0;
  for (size_t i = 0; i < y.size() && bad < 5; ++i) {
    if (std::fabs(y[i] - want[i]) > tol) {
      ++bad;
      ADD_FAILURE() << type_name(type) << (avx2 ? (vnni ? " avx2/avx512" : " avx2 only") : " portable") << " m=" << m
                    << " n=" << n << " k=" << k << ": y[" << i << "] = " << y[i] << ", expected " << want[i];
    }
  }
}

const GgmlType kWeightTypes[] = {GgmlType::f32,  GgmlType::f16,  GgmlType::bf16, GgmlType::q4_0, GgmlType::q4_1,
                                 GgmlType::q5_0, GgmlType::q5_1, GgmlType::q8_0, GgmlType::q2_k, GgmlType::q3_k,
                                 GgmlType::q4_k, GgmlType::q5_k, GgmlType::q6_k};

}  // namespace

TEST(QuantKernels, EveryTypeMatchesTheExactProductOfQuantizedOperands) {
  for (GgmlType type : kWeightTypes) {
    for (int64_t m : {1, 3, 4, 9}) {
      check_type(type, m, 37, 512, /*avx2=*/true);
      check_type(type, m, 37, 512, /*avx2=*/true, /*vnni=*/false);  // the AVX2 kernels where VNNI exists
      check_type(type, m, 37, 512, /*avx2=*/false);
    }
  }
}

// Every dispatch hands out the kernels of its own file: the AVX2 and VNNI files define kernel classes of
// the same names, and a template instantiated with them in a shared namespace was once merged by the
// linker, so that the VNNI path silently ran AVX2's kernels.
TEST(QuantKernels, VnniDispatchGivesItsOwnKernels) {
  if (!kernels::use_avx512_vnni()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI (or TESSERA_NO_AVX512 is set)";
  for (GgmlType type : kWeightTypes) {
    const qk::DotFn vnni = qk::vnni_dot(type);
    if (vnni != nullptr) {
      EXPECT_NE(vnni, qk::avx2_dot(type)) << type_name(type);
    }
  }
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k}) {
    for (const auto& [rows, groups] : {std::pair{1, 1}, {4, 1}, {4, qk::kX8PrefillGroups}, {1, qk::kX8DecodeGroups}}) {
      const qk::DotX8Fn vnni = qk::vnni_dot_x8(type, rows, groups);
      ASSERT_NE(vnni, nullptr) << type_name(type) << " " << rows << "x" << groups;
      EXPECT_NE(vnni, qk::avx2_dot_x8(type, rows, groups)) << type_name(type) << " " << rows << "x" << groups;
    }
  }
}

TEST(QuantKernels, LargerShapesUseTheThreadPoolAndTiles) {
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k, GgmlType::q6_k}) {
    check_type(type, 1, 600, 1024, true);
    check_type(type, 130, 70, 1024, true);
  }
}

// The decode kernels work on groups of blocks (Q4_0: four, through a paired activation layout); rows
// whose block count is not a multiple of the group end in a tail that takes the plain path.
TEST(QuantKernels, DecodeRowsWithBlockCountsOffTheGroupSize) {
  for (int64_t k : {32, 64, 96, 160, 192, 224, 288}) {
    check_type(GgmlType::q4_0, 1, 70, k, true);
    check_type(GgmlType::q8_0, 1, 70, k, true);
  }
  for (int64_t k : {256, 512, 768, 1280}) {
    check_type(GgmlType::q4_k, 1, 70, k, true);
    check_type(GgmlType::q6_k, 1, 70, k, true);
  }
}

TEST(QuantKernels, Avx2AndPortablePathsAgree) {
  if (!kernels::use_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k, GgmlType::q6_k}) {
    EXPECT_TRUE(qk::has_avx2_kernel(type)) << type_name(type);
    const int64_t m = 5, n = 19, k = 768;
    const std::vector<float> wf = gaussian(static_cast<size_t>(n * k), 1, 0.05f);
    const std::vector<float> x = gaussian(static_cast<size_t>(m * k), 2, 1.0f);
    const std::vector<uint8_t> w = quantize(type, wf.data(), n, k);
    std::vector<float> fast(static_cast<size_t>(m * n)), slow(fast.size());
    qk::quantized_matmul(type, w.data(), n, k, x.data(), m, fast.data());
    {
      Avx2Switch off(false);
      qk::quantized_matmul(type, w.data(), n, k, x.data(), m, slow.data());
    }
    for (size_t i = 0; i < fast.size(); ++i) EXPECT_NEAR(fast[i], slow[i], 1e-4 * (1 + std::fabs(slow[i]))) << i;
  }
}

TEST(QuantKernels, ExtremeBlocksDoNotOverflow) {
  // Full-range weights and activations: Q8_0 codes of +-127 against +-127 must not saturate the
  // 16-bit pair sums, and zero blocks must give exact zeros.
  const int64_t k = 256, n = 4;
  std::vector<float> wf(static_cast<size_t>(n * k)), x(static_cast<size_t>(k));
  for (int64_t i = 0; i < n * k; ++i) wf[i] = (i % 2 ? 1.0f : -1.0f) * (i < k ? 0.0f : 1.0f);
  for (int64_t i = 0; i < k; ++i) x[i] = i % 2 ? 1.0f : -1.0f;
  for (GgmlType type : {GgmlType::q8_0, GgmlType::q4_0, GgmlType::q4_k, GgmlType::q6_k, GgmlType::q2_k}) {
    const std::vector<uint8_t> w = quantize(type, wf.data(), n, k);
    std::vector<float> y(static_cast<size_t>(n));
    qk::quantized_matmul(type, w.data(), n, k, x.data(), 1, y.data());
    const std::vector<double> want = expected(type, w, x, 1, n, k);
    EXPECT_EQ(y[0], 0.0f) << type_name(type);
    for (int64_t j = 1; j < n; ++j) {
      EXPECT_NEAR(y[j], want[j], 1e-3) << type_name(type);
      EXPECT_GT(y[j], 200.0f) << type_name(type);  // ~256 (Q4_0 clips +1 to +0.875: 240)
    }
  }
}

// Q8_K activations (for the K-quant kernels) are llama.cpp's reference bytes, from the AVX2 path too:
// the first value of largest magnitude picks the sign of the scale, ties round to even, bsums match, and
// blocks with NaN or infinity go to the reference.
TEST(QuantKernels, Q8KActivationsEqualTheReferenceEncoder) {
  const int64_t k = 256 * 8;
  std::vector<float> x = gaussian(static_cast<size_t>(k), 7, 1.0f);
  x[5] = -9.0f;  // block 0: two values of the largest magnitude; the first (negative) one wins
  x[9] = 9.0f;
  for (int i = 256; i < 512; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 7) - 3.0f;  // block 1: many ties
  x[256] = -127.0f;
  for (int i = 512; i < 768; ++i) x[static_cast<size_t>(i)] = 0.0f;  // block 2: all zero
  x[800] = std::nanf("");                                            // block 3: a NaN
  x[1100] = INFINITY;                                                // block 4: an infinity
  for (int i = 1280; i < 1536; ++i) x[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i - 1408);  // block 5
  const size_t bytes = static_cast<size_t>(row_bytes(GgmlType::q8_k, k));
  std::vector<uint8_t> fast(bytes), reference(bytes);
  qk::quantize_activation_row(GgmlType::q8_k, x.data(), fast.data(), k);
  tessera::quant::detail::quantize_q8_k(x.data(), reference.data(), k);
  for (size_t b = 0; b < bytes / sizeof(BlockQ8_K); ++b) {
    EXPECT_EQ(0, std::memcmp(fast.data() + b * sizeof(BlockQ8_K), reference.data() + b * sizeof(BlockQ8_K),
                             sizeof(BlockQ8_K)))
        << "block " << b;
  }
  BlockQ8_K b0;
  std::memcpy(&b0, fast.data(), sizeof b0);
  EXPECT_EQ(b0.qs[5], -127);  // the negative first maximum maps to -127 ...
  EXPECT_EQ(b0.qs[9], 127);   // ... and its positive twin to +127
}

TEST(QuantKernels, ActivationQuantizationFollowsLlamaCppsCpuBackend) {
  // Q8_0 activations as llama.cpp's CPU backend makes them: d = amax / 127 (f16) and codes rounded half
  // to even. With amax = 127 the codes are the values themselves, so the ties show: 2.5 -> 2,
  // -0.5 -> 0 (ggml's reference encoder, which rounds half away from zero, gives 3 and -1).
  std::vector<float> x(64, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = 3.5f;
  x[3] = -0.5f;
  x[4] = -1.5f;
  for (int i = 32; i < 64; ++i) x[i] = static_cast<float>(i) * 0.25f;
  std::vector<uint8_t> fast(68), slow(68);
  qk::quantize_activation_row(GgmlType::q8_0, x.data(), fast.data(), 64);
  {
    Avx2Switch off(false);
    qk::quantize_activation_row(GgmlType::q8_0, x.data(), slow.data(), 64);
  }
  EXPECT_EQ(fast, slow);
  BlockQ8_0 b;
  std::memcpy(&b, fast.data(), sizeof(b));
  EXPECT_EQ(f16_bits_to_f32(b.d), 1.0f);
  EXPECT_EQ(std::vector<int>(b.qs, b.qs + 6), (std::vector<int>{127, 2, 4, 0, -2, 0}));
  std::vector<uint8_t> ref(68);
  quantize_row(GgmlType::q8_0, x.data(), ref.data(), 64);
  EXPECT_EQ(static_cast<int8_t>(ref[2 + 1]), 3);
  // Q8_1 adds s = d * sum(codes).
  std::vector<uint8_t> q81(72);
  qk::quantize_activation_row(GgmlType::q8_1, x.data(), q81.data(), 64);
  BlockQ8_1 b1;
  std::memcpy(&b1, q81.data(), sizeof(b1));
  EXPECT_EQ(f16_bits_to_f32(b1.s), 131.0f);
}

TEST(QuantKernels, DegenerateSizesAndErrors) {
  std::vector<float> y(6, 5.0f), x(6, 1.0f);
  std::vector<uint8_t> w(1);
  qk::quantized_matmul(GgmlType::q8_0, w.data(), 3, 0, x.data(), 2, y.data());  // k = 0: zeros
  for (float v : y) EXPECT_EQ(v, 0.0f);
  qk::quantized_matmul(GgmlType::q8_0, w.data(), 0, 32, x.data(), 2, y.data());  // nothing to do
  EXPECT_TESSERA_ERROR(qk::quantized_matmul(GgmlType::q4_k, w.data(), 1, 100, x.data(), 1, y.data()), "100 values",
                       "q4_k");
  EXPECT_TESSERA_ERROR(qk::quantized_matmul(GgmlType::iq2_xxs, w.data(), 1, 256, x.data(), 1, y.data()),
                       "no CPU kernel for iq2_xxs");
  EXPECT_FALSE(qk::has_kernel(GgmlType::iq2_xxs));
  EXPECT_TRUE(qk::has_kernel(GgmlType::q3_k));
  EXPECT_TRUE(qk::has_kernel(GgmlType::bf16));
}
