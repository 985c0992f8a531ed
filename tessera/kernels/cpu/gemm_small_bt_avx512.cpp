// Dot products of up to four rows of A with four rows of B (sgemm_small_m's op(B) = B^T, gemm_small.cpp)
// with AVX-512: 16 accumulators of 16 lanes, so each k-step loads 4 + 4 vectors for 16 FMAs. The AVX2
// form (dot2x4_avx2: two rows of A, 8 lanes) loads 6 vectors for 8 FMAs and is bound by its loads:
// MobileNetV2's classifier at batch 16 (16 x 1000 x 1280, weights [1000, 1280]) ran at 68 GFLOP/s on
// two threads, 0.6 ms where ONNX Runtime takes 0.27.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/gemm_internal.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels::gemm_detail {

#if TESSERA_X86_KERNELS

namespace {

// The sum of v's lanes (not _mm512_reduce_add_ps: GCC 12 warns on its undefined upper halves).
__attribute__((target("avx512f"), always_inline)) inline float lane_sum(__m512 v) {
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xFF, _mm512_castps_pd(v), 0));
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xFF, _mm512_castps_pd(v), 1));
  const __m256 s8 = _mm256_add_ps(lo, hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

template <int R>
__attribute__((target("avx512f"))) void rows_dot4_avx512(const float* x, int64_t ldx, const float* y, int64_t ldy,
                                                         int64_t k, float* out) {
  __m512 s[R][4];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 4; ++c) s[r][c] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; p += 16) {
    const __mmask16 m = k - p >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (k - p)) - 1);
    __m512 yv[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) yv[c] = _mm512_maskz_loadu_ps(m, y + c * ldy + p);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + r * ldx + p);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) s[r][c] = _mm512_fmadd_ps(xv, yv[c], s[r][c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 4; ++c) out[r * 4 + c] = lane_sum(s[r][c]);
}

}  // namespace

void dots_rows_by_4_avx512(const float* x, int64_t ldx, int64_t rows, const float* y, int64_t ldy, int64_t k,
                           float* out) {
  switch (rows) {
    case 1:
      return rows_dot4_avx512<1>(x, ldx, y, ldy, k, out);
    case 2:
      return rows_dot4_avx512<2>(x, ldx, y, ldy, k, out);
    case 3:
      return rows_dot4_avx512<3>(x, ldx, y, ldy, k, out);
    default:
      return rows_dot4_avx512<4>(x, ldx, y, ldy, k, out);
  }
}

#else

void dots_rows_by_4_avx512(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::gemm_detail
