// im2col panels of 32 columns with AVX-512: a run of columns (one output row of one image) reads one
// input row per tap, so each panel row is one or two masked loads (zeros where the tap falls in the
// padding, no fault there) and a masked store; stride 2 loads twice the span and keeps the even lanes.
// The masks are worked out once per run and tap column, not per element.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/conv_pack.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include <algorithm>
#endif

namespace tessera::kernels::conv_detail {

bool can_pack_columns_avx512(const Conv2dGeometry& g) {
  return TESSERA_X86_KERNELS && (g.stride_w == 1 || g.stride_w == 2) && g.dilation_w == 1 && g.kernel_w <= 16;
}

#if TESSERA_X86_KERNELS

namespace {

constexpr int64_t kNR = 32;

// Bits [lo, hi) of a 64-bit mask (0 <= lo <= hi <= 64).
inline uint64_t bit_range(int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  const uint64_t upto_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upto_hi & ~((uint64_t{1} << lo) - 1);
}

__attribute__((target("avx512f"))) inline void store_run(float* d, uint32_t len_mask, __m512 lo, __m512 hi) {
  _mm512_mask_storeu_ps(d, static_cast<__mmask16>(len_mask), lo);
  _mm512_mask_storeu_ps(d + 16, static_cast<__mmask16>(len_mask >> 16), hi);
}

// A 1x1, stride-1, unpadded convolution reads the image itself: a run is a span of one image.
__attribute__((target("avx512f"))) void pack_pointwise(const ColumnSource& src, int64_t p0, int64_t kc, int64_t j0,
                                                       int64_t cols, float* dst) {
  const int64_t plane = in_plane(*src.g);
  for (int64_t c0 = 0; c0 < cols;) {
    const int64_t j = j0 + c0, n = j / plane, q = j % plane;
    const int64_t len = std::min(cols - c0, plane - q);
    const float* s = src.x + n * src.image_stride + p0 * plane + q;
    float* d = dst + c0;
    if (len == kNR) {
      for (int64_t p = 0; p < kc; ++p, s += plane, d += kNR) {
        _mm512_storeu_ps(d, _mm512_loadu_ps(s));
        _mm512_storeu_ps(d + 16, _mm512_loadu_ps(s + 16));
      }
    } else {
      const auto m = static_cast<uint32_t>(bit_range(0, len));
      const auto m0 = static_cast<__mmask16>(m), m1 = static_cast<__mmask16>(m >> 16);
      for (int64_t p = 0; p < kc; ++p, s += plane, d += kNR)
        store_run(d, m, _mm512_maskz_loadu_ps(m0, s), _mm512_maskz_loadu_ps(m1, s + 16));
    }
    c0 += len;
  }
}

}  // namespace

__attribute__((target("avx512f"))) void pack_columns_avx512(const ColumnSource& src, int64_t p0, int64_t kc,
                                                            int64_t j0, int64_t cols, float* dst) {
  const Conv2dGeometry& g = *src.g;
  if (cols < kNR) {
    const auto tail = static_cast<uint32_t>(~bit_range(0, cols));
    for (int64_t p = 0; p < kc; ++p) store_run(dst + p * kNR, tail, _mm512_setzero_ps(), _mm512_setzero_ps());
  }
  if (is_pointwise(g)) {
    pack_pointwise(src, p0, kc, j0, cols, dst);
    return;
  }
  const int64_t plane = out_plane(g), taps_n = taps(g), sw = g.stride_w;
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  uint64_t load_mask[16];  // per tap column: the input lanes to load, relative to the run's first tap
  for (int64_t c0 = 0; c0 < cols;) {
    const int64_t j = j0 + c0;
    const int64_t n = j / plane, q = j % plane, oh = q / g.out_w, ow0 = q % g.out_w;
    const int64_t len = std::min(cols - c0, g.out_w - ow0);
    const auto len_mask = static_cast<uint32_t>(bit_range(0, len));
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      int64_t lo = 0, hi = 0;
      valid_outputs(g.in_w, g.out_w, sw, kw - g.pad_w, lo, hi);
      lo = std::clamp(lo - ow0, int64_t{0}, len);
      hi = std::clamp(hi - ow0, lo, len);
      // Lane c reads input lane c * sw; for stride 2 the odd lanes between valid ones are in bounds too.
      load_mask[kw] = sw == 1 ? bit_range(lo, hi) : bit_range(2 * lo, 2 * hi - 1);
    }
    const float* xn = src.x + n * src.image_stride + ow0 * sw - g.pad_w;
    int64_t ci = p0 / taps_n, kh = p0 % taps_n / g.kernel_w, kw = p0 % g.kernel_w;
    for (int64_t p = 0; p < kc; ++p) {
      float* d = dst + p * kNR + c0;
      const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) {
        store_run(d, len_mask, _mm512_setzero_ps(), _mm512_setzero_ps());
      } else {
        const float* s = xn + ci * in_plane(g) + ih * g.in_w + kw;  // may point into the padding: masked
        const uint64_t m = load_mask[kw];
        if (sw == 1) {
          store_run(d, len_mask, _mm512_maskz_loadu_ps(static_cast<__mmask16>(m), s),
                    _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> 16), s + 16));
        } else {
          const __m512 a0 = _mm512_maskz_loadu_ps(static_cast<__mmask16>(m), s);
          const __m512 a1 = _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> 16), s + 16);
          __m512 hi = _mm512_setzero_ps();
          if (len > 16) {
            const __m512 a2 = _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> 32), s + 32);
            const __m512 a3 = _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> 48), s + 48);
            hi = _mm512_permutex2var_ps(a2, evens, a3);
          }
          store_run(d, len_mask, _mm512_permutex2var_ps(a0, evens, a1), hi);
        }
      }
      if (++kw == g.kernel_w) {
        kw = 0;
        if (++kh == g.kernel_h) {
          kh = 0;
          ++ci;
        }
      }
    }
    c0 += len;
  }
}

#else

void pack_columns_avx512(const ColumnSource&, int64_t, int64_t, int64_t, int64_t, float*) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::conv_detail
