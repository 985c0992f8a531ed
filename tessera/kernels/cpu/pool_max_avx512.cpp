// Max pooling planes with AVX-512: 16 outputs of a row per vector, each tap of the window one masked
// load (-inf in the padding, no fault there; stride 2 loads 32 inputs and keeps the even lanes), taken
// where it is greater or NaN, in the scalar row loop's order (pool.cpp), so the results are the same.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/pool_max_avx512.h"

#include <algorithm>
#include <limits>

#include "tessera/kernels/cpu/conv_internal.h"
#include "tessera/kernels/cpu/cpu_features.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels::pool_detail {

namespace {

inline uint64_t bits(int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  const uint64_t upto_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upto_hi & ~((uint64_t{1} << lo) - 1);
}

}  // namespace

bool max_pool_avx512_applies(const Pool2dGeometry& g) {
  return TESSERA_X86_KERNELS && use_avx512() && (g.stride_w == 1 || g.stride_w == 2) &&
         g.kernel_w <= kMaxAvx512PoolKernelW && g.out_w <= kMaxAvx512PoolOutW;
}

MaxPoolMasks max_pool_masks(const Pool2dGeometry& g) {
  MaxPoolMasks m;
  for (int64_t c = 0; c < (g.out_w + 15) / 16; ++c) {
    const int64_t ow0 = c * 16, len = std::min<int64_t>(16, g.out_w - ow0);
    m.store[c] = static_cast<uint32_t>(bits(0, len));
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      int64_t lo = 0, hi = 0;
      conv_detail::valid_outputs(g.in_w, g.out_w, g.stride_w, kw * g.dilation_w - g.pad_w, lo, hi);
      lo = std::clamp(lo - ow0, int64_t{0}, len);
      hi = std::clamp(hi - ow0, lo, len);
      // Lane i reads input lane i * stride; for stride 2 the odd lanes between valid ones are in bounds.
      m.load[c][kw] = g.stride_w == 1 ? bits(lo, hi) : bits(2 * lo, 2 * hi - 1);
    }
  }
  return m;
}

#if TESSERA_X86_KERNELS

__attribute__((target("avx512f"))) void max_plane_avx512(const Pool2dGeometry& g, const MaxPoolMasks& masks,
                                                         const float* xp, float* yp) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const int64_t chunks = (g.out_w + 15) / 16, sw = g.stride_w;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t ow0 = c * 16;
      __m512 best = lowest;
      for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
        const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
        if (ih < 0 || ih >= g.in_h) continue;
        const float* row = xp + ih * g.in_w + ow0 * sw - g.pad_w;  // may point into the padding: masked
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const float* s = row + kw * g.dilation_w;
          const uint64_t m = masks.load[c][kw];
          __m512 v;
          if (sw == 1) {
            v = _mm512_mask_loadu_ps(lowest, static_cast<__mmask16>(m), s);
          } else {
            v = _mm512_permutex2var_ps(_mm512_mask_loadu_ps(lowest, static_cast<__mmask16>(m), s), evens,
                                       _mm512_mask_loadu_ps(lowest, static_cast<__mmask16>(m >> 16), s + 16));
          }
          // Taken when greater or NaN, as the scalar loop's (v > best || v != v).
          const __mmask16 take = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
          best = _mm512_mask_mov_ps(best, take, v);
        }
      }
      _mm512_mask_storeu_ps(yp + oh * g.out_w + ow0, static_cast<__mmask16>(masks.store[c]), best);
    }
  }
}

#else

void max_plane_avx512(const Pool2dGeometry&, const MaxPoolMasks&, const float*, float*) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::pool_detail
