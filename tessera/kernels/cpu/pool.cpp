// Max and average pooling, parallel over planes. The 2x2 / stride-2 max pool of CNNs has an AVX2
// path that handles 8 windows per step, other max pools of stride 1 or 2 an AVX-512 one
// (pool_max_avx512.cpp); everything else goes through the general scalar loops.
#include "tessera/kernels/cpu/pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tessera/core/error.h"
#include "tessera/core/window.h"
#include "tessera/kernels/cpu/conv_internal.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/pool_max_avx512.h"
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels {

namespace {

void check_geometry(const Pool2dGeometry& g, const char* what) {
  TESSERA_CHECK(g.planes >= 0 && g.in_h >= 0 && g.in_w >= 0 && g.kernel_h >= 1 && g.kernel_w >= 1 && g.stride_h >= 1 &&
                    g.stride_w >= 1 && g.pad_h >= 0 && g.pad_w >= 0 && g.dilation_h >= 1 && g.dilation_w >= 1 &&
                    g.out_h >= 0 && g.out_w >= 0,
                "{}: bad geometry: planes={} input {}x{} kernel {}x{} stride {}x{} padding {}x{} dilation {}x{} output "
                "{}x{}",
                what, g.planes, g.in_h, g.in_w, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w,
                g.dilation_h, g.dilation_w, g.out_h, g.out_w);
  TESSERA_CHECK(g.out_h <= sliding_window_count(g.in_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h, g.ceil_mode) &&
                    g.out_w <= sliding_window_count(g.in_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w, g.ceil_mode),
                "{}: output {}x{} exceeds the natural pooled size", what, g.out_h, g.out_w);
}

// The vector path reads whole 2x2 windows, so a partial last window (ceil mode) takes the scalar loops.
bool is_2x2_stride2(const Pool2dGeometry& g) {
  return g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 && g.stride_w == 2 && g.pad_h == 0 && g.pad_w == 0 &&
         g.dilation_h == 1 && g.dilation_w == 1 && 2 * g.out_h <= g.in_h && 2 * g.out_w <= g.in_w;
}

// True when v should replace the current best (greater, or the first NaN).
inline bool beats(float v, float best) {
  return v > best || (std::isnan(v) && !std::isnan(best));
}

// Flat index (within the plane) of a window's first maximum, or -1 for a window entirely in padding.
inline int64_t window_argmax(const Pool2dGeometry& g, const float* xp, int64_t oh, int64_t ow) {
  int64_t best_at = -1;
  float best = 0.0f;
  for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
    const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
    if (ih < 0 || ih >= g.in_h) continue;
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
      if (iw < 0 || iw >= g.in_w) continue;
      const float v = xp[ih * g.in_w + iw];
      if (best_at < 0 || beats(v, best)) {
        best = v;
        best_at = ih * g.in_w + iw;
      }
    }
  }
  return best_at;
}

// Row by row: each tap of the window is one pass over the output row's valid range, which the
// compiler vectorises (the window-by-window argmax loop ran ResNet's 3x3 / stride-2 pool at a tenth of
// that speed). A NaN wins as in beats(); a window entirely in padding stays -inf.
void max_plane_generic(const Pool2dGeometry& g, const float* xp, float* yp) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    float* yr = yp + oh * g.out_w;
    std::fill(yr, yr + g.out_w, -std::numeric_limits<float>::infinity());
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t offset = kw * g.dilation_w - g.pad_w;
        int64_t lo = 0, hi = 0;
        conv_detail::valid_outputs(g.in_w, g.out_w, g.stride_w, offset, lo, hi);
        const float* xr = xp + ih * g.in_w + offset;
        const int64_t s = g.stride_w;
        for (int64_t ow = lo; ow < hi; ++ow) {
          const float v = xr[ow * s], best = yr[ow];
          yr[ow] = (v > best || v != v) ? v : best;
        }
      }
    }
  }
}

void max_grad_plane_generic(const Pool2dGeometry& g, const float* xp, const float* dyp, float* dxp) {
  std::memset(dxp, 0, sizeof(float) * static_cast<size_t>(g.in_h * g.in_w));
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const int64_t at = window_argmax(g, xp, oh, ow);
      if (at >= 0) dxp[at] += dyp[oh * g.out_w + ow];
    }
}

#if TESSERA_X86_KERNELS
// max(a, b) where a NaN in either operand wins (_mm256_max_ps alone returns b when a is NaN).
__attribute__((target("avx2,fma"))) inline __m256 max_nan(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

// For 8 windows of rows r0/r1 starting at column 2*ow0: the four taps in scan order, as vectors in
// the lane order [w0 w1 w4 w5 | w2 w3 w6 w7] produced by the even/odd shuffles.
struct Taps8 {
  __m256 a, b, c, d;
};
__attribute__((target("avx2,fma"))) inline Taps8 load_taps(const float* r0, const float* r1) {
  const __m256 r0lo = _mm256_loadu_ps(r0), r0hi = _mm256_loadu_ps(r0 + 8);
  const __m256 r1lo = _mm256_loadu_ps(r1), r1hi = _mm256_loadu_ps(r1 + 8);
  return {_mm256_shuffle_ps(r0lo, r0hi, 0x88), _mm256_shuffle_ps(r0lo, r0hi, 0xDD), _mm256_shuffle_ps(r1lo, r1hi, 0x88),
          _mm256_shuffle_ps(r1lo, r1hi, 0xDD)};
}

// A tap "hits" when it equals the window max, or is NaN when the max is NaN.
__attribute__((target("avx2,fma"))) inline __m256 tap_hits(__m256 v, __m256 m, __m256 m_nan) {
  return _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_EQ_OQ), _mm256_and_ps(m_nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}

__attribute__((target("avx2,fma"))) void max_plane_2x2(const Pool2dGeometry& g, const float* xp, float* yp) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const float* r0 = xp + 2 * oh * g.in_w;
    const float* r1 = r0 + g.in_w;
    float* yr = yp + oh * g.out_w;
    int64_t ow = 0;
    for (; ow + 8 <= g.out_w && 2 * ow + 16 <= g.in_w; ow += 8) {
      const Taps8 t = load_taps(r0 + 2 * ow, r1 + 2 * ow);
      const __m256 m = max_nan(max_nan(t.a, t.b), max_nan(t.c, t.d));
      _mm256_storeu_ps(yr + ow, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xD8)));
    }
    if (ow < g.out_w) {
      // The last (< 8) windows: the same vector code on a zero-padded copy, without data-dependent
      // branches (CNN planes are narrow: 13 or 5 outputs per row).
      const int64_t rem = g.out_w - ow;
      alignas(32) float t0[16] = {}, t1[16] = {}, out[8];
      for (int64_t i = 0; i < 2 * rem; ++i) {
        t0[i] = r0[2 * ow + i];
        t1[i] = r1[2 * ow + i];
      }
      const Taps8 t = load_taps(t0, t1);
      const __m256 m = max_nan(max_nan(t.a, t.b), max_nan(t.c, t.d));
      _mm256_store_ps(out, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xD8)));
      for (int64_t i = 0; i < rem; ++i) yr[ow + i] = out[i];
    }
  }
}

// Gradients of 8 windows whose rows start at r0/r1: the first maximum of each window (in scan order)
// gets dy, the other three taps 0; writes 16 floats to each of d0 and d1.
__attribute__((target("avx2,fma"))) inline void max_grad_8_windows(const float* r0, const float* r1, const float* dyr,
                                                                   float* d0, float* d1) {
  const Taps8 t = load_taps(r0, r1);
  const __m256 m = max_nan(max_nan(t.a, t.b), max_nan(t.c, t.d));
  const __m256 m_nan = _mm256_cmp_ps(m, m, _CMP_UNORD_Q);
  // The first hit in scan order takes the gradient.
  const __m256 ha = tap_hits(t.a, m, m_nan);
  const __m256 hb = _mm256_andnot_ps(ha, tap_hits(t.b, m, m_nan));
  const __m256 ab = _mm256_or_ps(ha, hb);
  const __m256 hc = _mm256_andnot_ps(ab, tap_hits(t.c, m, m_nan));
  const __m256 hd = _mm256_andnot_ps(_mm256_or_ps(ab, hc), _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
  const __m256 dy = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_loadu_ps(dyr)), 0xD8));
  const __m256 ga = _mm256_and_ps(ha, dy), gb = _mm256_and_ps(hb, dy);
  const __m256 gc = _mm256_and_ps(hc, dy), gd = _mm256_and_ps(hd, dy);
  _mm256_storeu_ps(d0, _mm256_unpacklo_ps(ga, gb));
  _mm256_storeu_ps(d0 + 8, _mm256_unpackhi_ps(ga, gb));
  _mm256_storeu_ps(d1, _mm256_unpacklo_ps(gc, gd));
  _mm256_storeu_ps(d1 + 8, _mm256_unpackhi_ps(gc, gd));
}

__attribute__((target("avx2,fma"))) void max_grad_plane_2x2(const Pool2dGeometry& g, const float* xp, const float* dyp,
                                                            float* dxp) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const float* r0 = xp + 2 * oh * g.in_w;
    const float* r1 = r0 + g.in_w;
    float* d0 = dxp + 2 * oh * g.in_w;
    float* d1 = d0 + g.in_w;
    const float* dyr = dyp + oh * g.out_w;
    int64_t ow = 0;
    for (; ow + 8 <= g.out_w && 2 * ow + 16 <= g.in_w; ow += 8) {
      max_grad_8_windows(r0 + 2 * ow, r1 + 2 * ow, dyr + ow, d0 + 2 * ow, d1 + 2 * ow);
    }
    if (ow < g.out_w) {  // the last (< 8) windows, on zero-padded copies as in max_plane_2x2
      const int64_t rem = g.out_w - ow;
      alignas(32) float t0[16] = {}, t1[16] = {}, g8[8] = {}, o0[16], o1[16];
      for (int64_t i = 0; i < 2 * rem; ++i) {
        t0[i] = r0[2 * ow + i];
        t1[i] = r1[2 * ow + i];
      }
      for (int64_t i = 0; i < rem; ++i) g8[i] = dyr[ow + i];
      max_grad_8_windows(t0, t1, g8, o0, o1);
      for (int64_t i = 0; i < 2 * rem; ++i) {
        d0[2 * ow + i] = o0[i];
        d1[2 * ow + i] = o1[i];
      }
    }
    // Columns past the last window get no gradient.
    for (int64_t iw = 2 * g.out_w; iw < g.in_w; ++iw) d0[iw] = d1[iw] = 0.0f;
  }
  // Rows past the last window get no gradient.
  std::memset(dxp + 2 * g.out_h * g.in_w, 0, sizeof(float) * static_cast<size_t>((g.in_h - 2 * g.out_h) * g.in_w));
}
#endif  // TESSERA_X86_KERNELS

// Parallel over planes with enough planes per chunk to amortise the dispatch.
template <typename F>
void for_planes(const Pool2dGeometry& g, runtime::ThreadPool* pool, F&& per_plane) {
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const int64_t work = std::max<int64_t>(1, g.in_h * g.in_w + g.out_h * g.out_w);
  tp.parallel_for(g.planes, std::max<int64_t>(1, 16384 / work), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) per_plane(p);
  });
}

// PyTorch's divisor: with count_include_pad the window clipped to the padded input (only a partial
// last window in ceil mode is cut), else the taps inside the input.
float avg_divisor(const Pool2dGeometry& g, bool count_include_pad, int64_t oh, int64_t ow) {
  if (count_include_pad) {
    const int64_t h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
    const int64_t h1 = std::min(h0 + g.kernel_h, g.in_h + g.pad_h), w1 = std::min(w0 + g.kernel_w, g.in_w + g.pad_w);
    return static_cast<float>((h1 - h0) * (w1 - w0));
  }
  int64_t nh = 0, nw = 0;
  for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
    const int64_t ih = oh * g.stride_h - g.pad_h + kh;
    nh += ih >= 0 && ih < g.in_h;
  }
  for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
    const int64_t iw = ow * g.stride_w - g.pad_w + kw;
    nw += iw >= 0 && iw < g.in_w;
  }
  return static_cast<float>(nh * nw);
}

// A window with no taps (only over an empty input) averages nothing: 0, as the reference defines it.
float safe_average(float sum, float divisor) { return divisor > 0.0f ? sum / divisor : 0.0f; }

}  // namespace

Pool2dGeometry make_pool2d_geometry(int64_t planes, int64_t in_h, int64_t in_w, int64_t kernel_h, int64_t kernel_w,
                                    int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                    int64_t dilation_h, int64_t dilation_w, bool ceil_mode) {
  Pool2dGeometry g;
  g.planes = planes;
  g.in_h = in_h;
  g.in_w = in_w;
  g.kernel_h = kernel_h;
  g.kernel_w = kernel_w;
  g.stride_h = stride_h == 0 ? kernel_h : stride_h;
  g.stride_w = stride_w == 0 ? kernel_w : stride_w;
  g.pad_h = pad_h;
  g.pad_w = pad_w;
  g.dilation_h = dilation_h;
  g.dilation_w = dilation_w;
  g.ceil_mode = ceil_mode;
  g.out_h = sliding_window_count(in_h, kernel_h, g.stride_h, pad_h, dilation_h, ceil_mode);
  g.out_w = sliding_window_count(in_w, kernel_w, g.stride_w, pad_w, dilation_w, ceil_mode);
  return g;
}

void max_pool2d_forward(const Pool2dGeometry& g, const float* x, float* y, runtime::ThreadPool* pool) {
  check_geometry(g, "max_pool2d_forward");
  [[maybe_unused]] const bool fast = is_2x2_stride2(g) && use_avx2();
  const bool separable = !fast && pool_detail::max_pool_3x3s2_avx512_applies(g);
  const bool wide = !fast && !separable && pool_detail::max_pool_avx512_applies(g);
  const pool_detail::MaxPoolMasks masks = wide ? pool_detail::max_pool_masks(g) : pool_detail::MaxPoolMasks{};
  for_planes(g, pool, [&](int64_t p) {
    const float* xp = x + p * g.in_h * g.in_w;
    float* yp = y + p * g.out_h * g.out_w;
#if TESSERA_X86_KERNELS
    if (fast) {
      max_plane_2x2(g, xp, yp);
    } else
#endif
        if (separable) {
      pool_detail::max_plane_3x3s2_avx512(g, xp, yp);
    } else if (wide) {
      pool_detail::max_plane_avx512(g, masks, xp, yp);
    } else {
      max_plane_generic(g, xp, yp);
    }
  });
}

void max_pool2d_backward(const Pool2dGeometry& g, const float* x, const float* dy, float* dx,
                         runtime::ThreadPool* pool) {
  check_geometry(g, "max_pool2d_backward");
  [[maybe_unused]] const bool fast = is_2x2_stride2(g) && use_avx2();
  for_planes(g, pool, [&](int64_t p) {
    const float* xp = x + p * g.in_h * g.in_w;
    const float* dyp = dy + p * g.out_h * g.out_w;
    float* dxp = dx + p * g.in_h * g.in_w;
#if TESSERA_X86_KERNELS
    if (fast) {
      max_grad_plane_2x2(g, xp, dyp, dxp);
    } else
#endif
    {
      max_grad_plane_generic(g, xp, dyp, dxp);
    }
  });
}

void avg_pool2d_forward(const Pool2dGeometry& g, bool count_include_pad, const float* x, float* y,
                        runtime::ThreadPool* pool) {
  check_geometry(g, "avg_pool2d_forward");
  for_planes(g, pool, [&](int64_t p) {
    const float* xp = x + p * g.in_h * g.in_w;
    float* yp = y + p * g.out_h * g.out_w;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        float s = 0.0f;
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          const int64_t ih = oh * g.stride_h - g.pad_h + kh;
          if (ih < 0 || ih >= g.in_h) continue;
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const int64_t iw = ow * g.stride_w - g.pad_w + kw;
            if (iw >= 0 && iw < g.in_w) s += xp[ih * g.in_w + iw];
          }
        }
        yp[oh * g.out_w + ow] = safe_average(s, avg_divisor(g, count_include_pad, oh, ow));
      }
    }
  });
}

void avg_pool2d_backward(const Pool2dGeometry& g, bool count_include_pad, const float* dy, float* dx,
                         runtime::ThreadPool* pool) {
  check_geometry(g, "avg_pool2d_backward");
  for_planes(g, pool, [&](int64_t p) {
    const float* dyp = dy + p * g.out_h * g.out_w;
    float* dxp = dx + p * g.in_h * g.in_w;
    std::memset(dxp, 0, sizeof(float) * static_cast<size_t>(g.in_h * g.in_w));
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const float share = safe_average(dyp[oh * g.out_w + ow], avg_divisor(g, count_include_pad, oh, ow));
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          const int64_t ih = oh * g.stride_h - g.pad_h + kh;
          if (ih < 0 || ih >= g.in_h) continue;
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const int64_t iw = ow * g.stride_w - g.pad_w + kw;
            if (iw >= 0 && iw < g.in_w) dxp[ih * g.in_w + iw] += share;
          }
        }
      }
  });
}

}  // namespace tessera::kernels
