// Packing F16 weight rows into the f32 panels of the f16 GEMM: a panel row holds one k position of nr
// weight rows, so the rows are transposed. Eight rows move at a time as an 8x8 transpose of 16-bit
// values within each 128-bit lane (sixteen k positions per ymm), then each lane is widened with F16C:
// a quarter of the shuffles of transposing after widening.
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS  // x86 only: without it, use_avx2() is false and nothing calls these
#include <immintrin.h>

#include "tessera/core/half.h"
#include "tessera/kernels/quant/f16_gemm.h"

namespace tessera::kernels::quant {

namespace {

#define TESSERA_F16C __attribute__((target("avx2,fma,f16c")))

// Sixteen k positions [p, p + 16) of eight rows, written as 16 panel rows of eight floats at dst. The
// same rows' next block (kc further) is prefetched into L2 on the way: a strip reads 32 rows 512 bytes
// at a time, too short a run for the hardware prefetchers, and the packing stalled on DRAM (12% of a
// prefill's time; 2048x2048 with 128 rows from DRAM went from 5.0 to 4.7 ms).
TESSERA_F16C inline void eight_rows(const uint16_t* const* src, int64_t p, int64_t kc, int64_t nr, float* dst) {
  if (p % 32 == 0) {  // once per 64-byte line
    for (int r = 0; r < 8; ++r) _mm_prefetch(reinterpret_cast<const char*>(src[r] + p + kc), _MM_HINT_T1);
  }
  __m256i a[8];
  for (int r = 0; r < 8; ++r) a[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src[r] + p));
  // Per lane: t pairs rows (2i, 2i+1) by position, u groups four rows, v all eight.
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);      // positions 0-3
    t[2 * i + 1] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);  // positions 4-7
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3, rows 4-7
    const __m256i lo = t[4 * h], hi = t[4 * h + 1], lo2 = t[4 * h + 2], hi2 = t[4 * h + 3];
    u[4 * h] = _mm256_unpacklo_epi32(lo, lo2);      // positions 0, 1
    u[4 * h + 1] = _mm256_unpackhi_epi32(lo, lo2);  // 2, 3
    u[4 * h + 2] = _mm256_unpacklo_epi32(hi, hi2);  // 4, 5
    u[4 * h + 3] = _mm256_unpackhi_epi32(hi, hi2);  // 6, 7
  }
  for (int q = 0; q < 4; ++q) {
    const __m256i even = _mm256_unpacklo_epi64(u[q], u[4 + q]);  // position 2q: rows 0-7
    const __m256i odd = _mm256_unpackhi_epi64(u[q], u[4 + q]);   // position 2q + 1
    _mm256_storeu_ps(dst + (2 * q) * nr, _mm256_cvtph_ps(_mm256_castsi256_si128(even)));
    _mm256_storeu_ps(dst + (2 * q + 1) * nr, _mm256_cvtph_ps(_mm256_castsi256_si128(odd)));
    _mm256_storeu_ps(dst + (2 * q + 8) * nr, _mm256_cvtph_ps(_mm256_extracti128_si256(even, 1)));
    _mm256_storeu_ps(dst + (2 * q + 9) * nr, _mm256_cvtph_ps(_mm256_extracti128_si256(odd, 1)));
  }
}

}  // namespace

TESSERA_F16C void pack_f16_panel(const uint16_t* w, int64_t ldw, int64_t rows, int64_t kc, int64_t nr, float* dst) {
  const int64_t full = rows == nr ? kc / 16 * 16 : 0;  // a short panel (the last weight rows) goes scalar
  for (int64_t g = 0; g < nr && full > 0; g += 8) {
    const uint16_t* src[8];
    for (int r = 0; r < 8; ++r) src[r] = w + (g + r) * ldw;
    for (int64_t p = 0; p < full; p += 16) eight_rows(src, p, kc, nr, dst + p * nr + g);
  }
  for (int64_t p = full; p < kc; ++p) {
    for (int64_t j = 0; j < nr; ++j) dst[p * nr + j] = j < rows ? f16_bits_to_f32(w[j * ldw + p]) : 0.0f;
  }
}

}  // namespace tessera::kernels::quant

#endif  // TESSERA_X86_KERNELS
