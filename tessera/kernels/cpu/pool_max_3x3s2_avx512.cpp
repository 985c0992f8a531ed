// 3x3 max pooling with stride 2 (ResNet's, after the stem) with AVX-512, separably: each input row's
// maximum over the three taps of each output column first (the 33 inputs that 16 outputs reach, in
// three loads: the even lanes, the odd lanes and the even lanes one further on), then the maximum of
// three such rows per output row. Stride 2 makes the third row of one output row the first of the next,
// so that row's maxima are kept, not computed again. Tap by tap (max_plane_avx512) a vector waits on a
// chain of nine compare-and-selects and loads every row three times: 0.32 ms for ResNet-18's 64
// planes of 112x112 on one thread.
//
// The same results as the scalar loop (pool.cpp), bit for bit: a tap is taken where it is greater or
// NaN, so a window's result is its last NaN if it has one, else its first maximum in (kh, kw) order
// (which of +0 and -0 comes first matters); the maximum of row results taken the same way, rows in
// order, is that same element. Taps in the padding load as -inf, which is never taken, as the scalar
// loop skips them.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/pool_max_avx512.h"

#include <algorithm>
#include <limits>

#include "tessera/kernels/cpu/cpu_features.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels::pool_detail {

bool max_pool_3x3s2_avx512_applies(const Pool2dGeometry& g) {
  return TESSERA_X86_KERNELS && use_avx512() && g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 2 &&
         g.stride_w == 2 && g.dilation_h == 1 && g.dilation_w == 1 && g.out_w <= kMaxAvx512PoolOutW;
}

#if TESSERA_X86_KERNELS

namespace {

// best, or v where v is greater or NaN (the scalar loop's v > best || v != v).
__attribute__((target("avx512f"), always_inline)) inline __m512 take_greater(__m512 best, __m512 v) {
  const __mmask16 m = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_mov_ps(best, m, v);
}

// Lanes [lo, hi) of 64, clamped.
inline uint64_t lane_bits64(int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, 64);
  if (hi <= lo) return 0;
  const uint64_t upto_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upto_hi & ~((uint64_t{1} << lo) - 1);
}

// The maxima over the three taps of outputs [16 c, 16 c + 16) of input row `row`; `m`: the columns
// inside the row of the 48 from the chunk's first tap.
__attribute__((target("avx512f"), always_inline)) inline __m512 pool_row_max(const float* row, uint64_t m, int64_t c,
                                                                          const Pool2dGeometry& g) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const float* s = row + 32 * c - g.pad_w;  // may point into the padding: masked
  const __m512 a = _mm512_mask_loadu_ps(lowest, static_cast<__mmask16>(m), s);
  const __m512 b = _mm512_mask_loadu_ps(lowest, static_cast<__mmask16>(m >> 16), s + 16);
  const __m512 e = _mm512_mask_loadu_ps(lowest, static_cast<__mmask16>(m >> 32), s + 32);
  const __m512 v0 = _mm512_permutex2var_ps(a, evens, b), v1 = _mm512_permutex2var_ps(a, odds, b);
  const __m512 v2 =
      _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0xFFFF, _mm512_castps_si512(e), _mm512_castps_si512(v0), 1));
  // Starting from -inf, the first tap is always taken (or is -inf itself).
  return take_greater(take_greater(v0, v1), v2);
}

}  // namespace

__attribute__((target("avx512f"))) void max_plane_3x3s2_avx512(const Pool2dGeometry& g, const float* xp, float* yp) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t chunks = (g.out_w + 15) / 16;
  // Per chunk: the input columns its 33 taps read that lie inside the row (the rest load as -inf), and
  // the outputs it stores.
  uint64_t columns[kMaxAvx512PoolOutW / 16];
  __mmask16 store[kMaxAvx512PoolOutW / 16];
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t start = 32 * c - g.pad_w;
    columns[c] = lane_bits64(-start, g.in_w - start);
    store[c] = static_cast<__mmask16>(lane_bits64(0, std::min<int64_t>(16, g.out_w - 16 * c)));
  }
  // The row maxima of the last row of the previous output row (the first row of this one).
  __m512 kept[kMaxAvx512PoolOutW / 16];
  int64_t kept_row = -1;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const int64_t ih0 = 2 * oh - g.pad_h;
    bool valid[3];
    for (int kh = 0; kh < 3; ++kh) valid[kh] = ih0 + kh >= 0 && ih0 + kh < g.in_h;
    const bool reuse = kept_row == ih0 && valid[0];
    for (int64_t c = 0; c < chunks; ++c) {
      __m512 best = lowest;
      bool any = false;
      if (valid[0]) {
        best = reuse ? kept[c] : pool_row_max(xp + ih0 * g.in_w, columns[c], c, g);
        any = true;
      }
      if (valid[1]) {
        const __m512 h = pool_row_max(xp + (ih0 + 1) * g.in_w, columns[c], c, g);
        best = any ? take_greater(best, h) : h;
        any = true;
      }
      if (valid[2]) {
        const __m512 h = pool_row_max(xp + (ih0 + 2) * g.in_w, columns[c], c, g);
        kept[c] = h;
        best = any ? take_greater(best, h) : h;
      }
      _mm512_mask_storeu_ps(yp + oh * g.out_w + 16 * c, store[c], best);
    }
    kept_row = valid[2] ? ih0 + 2 : -1;
  }
}

#else

void max_plane_3x3s2_avx512(const Pool2dGeometry&, const float*, float*) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::pool_detail
