// im2col panels of 32 columns with AVX-512: a run of columns (one output row of one image) reads one
// input row per tap, so each panel row is a few merge-masked loads (zeros where the tap falls in the
// padding, no fault there) and two whole stores; stride 2 loads twice the span and keeps the even
// lanes. The masks are worked out once per run and tap column, not per element.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/conv_pack.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include <algorithm>
#endif

namespace tessera::kernels::conv_detail {

namespace {
constexpr int64_t kMaxDepthKernel = 8;  // the widest and tallest kernel whose rows and masks a run keeps
}  // namespace

bool can_pack_columns_avx512(const Conv2dGeometry& g) {
  return TESSERA_X86_KERNELS && (g.stride_w == 1 || g.stride_w == 2) && g.dilation_w == 1 &&
         g.kernel_w <= kMaxDepthKernel && g.kernel_h <= kMaxDepthKernel;
}

#if TESSERA_X86_KERNELS

namespace {

constexpr int64_t kNR = 32;
// The runs (and their masks) of the panels filled together live on the stack: at most this many.
constexpr int64_t kMaxPackRuns = 192;

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
      // Each row is a stream of its own, and the hardware's streams stop at 4 KiB pages: fetch the
      // panel after next of each row.
      for (int64_t p = 0; p < kc; ++p, s += plane, d += kNR) {
        _mm_prefetch(reinterpret_cast<const char*>(s + 2 * kNR), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(s + 2 * kNR + 16), _MM_HINT_T0);
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
  const int64_t panels = (cols + kNR - 1) / kNR;
  if (is_pointwise(g)) {
    for (int64_t i = 0; i < panels; ++i) {
      const int64_t c = std::min(kNR, cols - i * kNR);
      float* d = dst + i * kNR * kc;
      if (c < kNR) {
        const auto tail = static_cast<uint32_t>(~bit_range(0, c));
        for (int64_t p = 0; p < kc; ++p) store_run(d + p * kNR, tail, _mm512_setzero_ps(), _mm512_setzero_ps());
      }
      pack_pointwise(src, p0, kc, j0 + i * kNR, c, d);
    }
    return;
  }
  // The runs of the panels (columns of one output row of one image). Each panel row is built in
  // registers by merge-masked loads, one or two per run, each lane reading its own tap (the address is
  // shifted so that lane c reads the run's column c - c0), and stored whole: no masked stores. A group
  // of panels is filled row by row, all of them for one tap before the next, so the loads walk along
  // the input rows and the taps that follow find them in L1.
  struct Run {
    // Per tap row: the input row the run reads (shifted so that lane c reads column c - c0 of the run),
    // and all lanes or none (a row in the padding, whose pointer is never read).
    const float* row[kMaxDepthKernel];
    uint64_t valid[kMaxDepthKernel];
    uint64_t mask[kMaxDepthKernel];  // per tap column: the panel's (stride 2: the wide load's) lanes
  };
  Run runs[kMaxPackRuns];
  int64_t first_run[kMaxPackRuns + 1];
  const int64_t plane = out_plane(g), taps_n = taps(g), sw = g.stride_w;
  // A panel has at most this many runs (one per output row it touches).
  const int64_t runs_per_panel = std::min(kNR, (kNR - 1) / g.out_w + 2);
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (int64_t group = 0; group < panels;) {
    const int64_t group_panels = std::min(panels - group, kMaxPackRuns / runs_per_panel);
    int64_t run_count = 0;
    for (int64_t i = 0; i < group_panels; ++i) {
      first_run[i] = run_count;
      const int64_t panel_j = j0 + (group + i) * kNR, panel_cols = std::min(kNR, j0 + cols - panel_j);
      for (int64_t c0 = 0; c0 < panel_cols; ++run_count) {
        const int64_t j = panel_j + c0;
        const int64_t n = j / plane, q = j % plane, oh = q / g.out_w, ow0 = q % g.out_w;
        const int64_t len = std::min(panel_cols - c0, g.out_w - ow0);
        Run& r = runs[run_count];
        const float* image = src.x + n * src.image_stride + (ow0 - c0) * sw - g.pad_w;
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          const bool inside = ih >= 0 && ih < g.in_h;
          r.valid[kh] = inside ? ~uint64_t{0} : 0;
          r.row[kh] = inside ? image + ih * g.in_w : image;
        }
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          int64_t lo = 0, hi = 0;
          valid_outputs(g.in_w, g.out_w, sw, kw - g.pad_w, lo, hi);
          lo = std::clamp(lo - ow0, int64_t{0}, len) + c0;
          hi = std::clamp(hi - ow0 + c0, lo, c0 + len);
          // Stride 2 loads 64 lanes and keeps the even ones; the odd lanes between valid ones are in bounds.
          r.mask[kw] = sw == 1 ? bit_range(lo, hi) : bit_range(2 * lo, 2 * hi - 1);
        }
        c0 += len;
      }
    }
    first_run[group_panels] = run_count;
    int64_t ci = p0 / taps_n, kh = p0 % taps_n / g.kernel_w, kw = p0 % g.kernel_w;
    for (int64_t p = 0; p < kc; ++p) {
      const int64_t tap_offset = ci * in_plane(g) + kw;
      for (int64_t i = 0; i < group_panels; ++i) {
        __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
        __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (int64_t k = first_run[i]; k < first_run[i + 1]; ++k) {
          const Run& r = runs[k];
          const float* s = r.row[kh] + tap_offset;  // may point outside the image: masked
          const uint64_t m = r.mask[kw] & r.valid[kh];
          lo = _mm512_mask_loadu_ps(lo, static_cast<__mmask16>(m), s);
          hi = _mm512_mask_loadu_ps(hi, static_cast<__mmask16>(m >> 16), s + 16);
          if (sw == 2) {
            a2 = _mm512_mask_loadu_ps(a2, static_cast<__mmask16>(m >> 32), s + 32);
            a3 = _mm512_mask_loadu_ps(a3, static_cast<__mmask16>(m >> 48), s + 48);
          }
        }
        if (sw == 2) {
          lo = _mm512_permutex2var_ps(lo, evens, hi);
          hi = _mm512_permutex2var_ps(a2, evens, a3);
        }
        float* d = dst + (group + i) * kNR * kc + p * kNR;
        _mm512_store_ps(d, lo);
        _mm512_store_ps(d + 16, hi);
      }
      if (++kw == g.kernel_w) {
        kw = 0;
        if (++kh == g.kernel_h) {
          kh = 0;
          ++ci;
        }
      }
    }
    group += group_panels;
  }
}

#else

void pack_columns_avx512(const ColumnSource&, int64_t, int64_t, int64_t, int64_t, float*) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::conv_detail
