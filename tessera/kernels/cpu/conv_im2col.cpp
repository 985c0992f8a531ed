// im2col / col2im for NCHW convolution, geometry checks and the per-thread work split.
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/conv_internal.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels {

Conv2dGeometry make_conv2d_geometry(int64_t batch, int64_t in_channels, int64_t in_h, int64_t in_w,
                                    int64_t out_channels, int64_t kernel_h, int64_t kernel_w, int64_t stride_h,
                                    int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t dilation_h,
                                    int64_t dilation_w, int64_t groups) {
  Conv2dGeometry g{batch, in_channels, in_h,     in_w,  out_channels, kernel_h,   kernel_w,   0,
                   0,     stride_h,    stride_w, pad_h, pad_w,        dilation_h, dilation_w, groups};
  g.out_h = conv_out_size(in_h, kernel_h, stride_h, pad_h, dilation_h);
  g.out_w = conv_out_size(in_w, kernel_w, stride_w, pad_w, dilation_w);
  return g;
}

void check_conv2d_geometry(const Conv2dGeometry& g, const char* what) {
  TESSERA_CHECK(g.batch >= 0 && g.in_channels >= 1 && g.out_channels >= 1 && g.in_h >= 0 && g.in_w >= 0,
                "{}: bad sizes batch={} in_channels={} out_channels={} input {}x{}", what, g.batch, g.in_channels,
                g.out_channels, g.in_h, g.in_w);
  TESSERA_CHECK(g.kernel_h >= 1 && g.kernel_w >= 1 && g.stride_h >= 1 && g.stride_w >= 1 && g.dilation_h >= 1 &&
                    g.dilation_w >= 1 && g.pad_h >= 0 && g.pad_w >= 0,
                "{}: bad window kernel {}x{} stride {}x{} padding {}x{} dilation {}x{}", what, g.kernel_h, g.kernel_w,
                g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w);
  TESSERA_CHECK(g.groups >= 1 && g.in_channels % g.groups == 0 && g.out_channels % g.groups == 0,
                "{}: groups {} must divide in_channels {} and out_channels {}", what, g.groups, g.in_channels,
                g.out_channels);
  const int64_t nat_h = conv_out_size(g.in_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  const int64_t nat_w = conv_out_size(g.in_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  TESSERA_CHECK(
      g.out_h >= 0 && g.out_w >= 0 && g.out_h <= std::max<int64_t>(nat_h, 0) && g.out_w <= std::max<int64_t>(nat_w, 0),
      "{}: output {}x{} exceeds the natural output size {}x{} of input {}x{}", what, g.out_h, g.out_w, nat_h, nat_w,
      g.in_h, g.in_w);
}

namespace conv_detail {

namespace {

#if TESSERA_X86_KERNELS
// A rows x cols block copy (dst stride dst_ld, src stride src_ld) for im2col's short rows (11 to 30
// floats in CNNs): whole vectors, and a last vector that overlaps the previous one instead of a
// scalar tail. One call per (channel, tap) keeps the per-row overhead to a few instructions.
__attribute__((target("avx2,fma"))) void copy_block_avx2(float* dst, int64_t dst_ld, const float* src, int64_t src_ld,
                                                         int64_t rows, int64_t cols) {
  if (cols < 8) {
    for (int64_t r = 0; r < rows; ++r, dst += dst_ld, src += src_ld)
      for (int64_t i = 0; i < cols; ++i) dst[i] = src[i];
    return;
  }
  for (int64_t r = 0; r < rows; ++r, dst += dst_ld, src += src_ld) {
    int64_t i = 0;
    for (; i + 8 <= cols; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
    if (i < cols) _mm256_storeu_ps(dst + cols - 8, _mm256_loadu_ps(src + cols - 8));
  }
}

// dst[r, 0:cols] += src[r, 0:cols] for a block (col2im's transpose of copy_block_avx2). The tail is
// scalar: overlapping vectors would add twice, and masked stores are slow on AMD cores.
__attribute__((target("avx2,fma"))) void add_block_avx2(float* dst, int64_t dst_ld, const float* src, int64_t src_ld,
                                                        int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r, dst += dst_ld, src += src_ld) {
    int64_t i = 0;
    for (; i + 8 <= cols; i += 8)
      _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
    for (; i < cols; ++i) dst[i] += src[i];
  }
}
#endif

}  // namespace

void im2col(const Conv2dGeometry& g, const float* x, float* col) {
  const int64_t oh_n = g.out_h, ow_n = g.out_w, plane = out_plane(g);
  const bool avx2 = use_avx2();
  for (int64_t ci = 0; ci < in_per_group(g); ++ci) {
    const float* xc = x + ci * in_plane(g);
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      int64_t oh_lo = 0, oh_hi = 0;
      valid_outputs(g.in_h, oh_n, g.stride_h, kh * g.dilation_h - g.pad_h, oh_lo, oh_hi);
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        float* row = col + ((ci * g.kernel_h + kh) * g.kernel_w + kw) * plane;
        const int64_t w_off = kw * g.dilation_w - g.pad_w;
        int64_t ow_lo = 0, ow_hi = 0;
        valid_outputs(g.in_w, ow_n, g.stride_w, w_off, ow_lo, ow_hi);
        const float* first = xc + (oh_lo * g.stride_h + kh * g.dilation_h - g.pad_h) * g.in_w + w_off;
#if TESSERA_X86_KERNELS
        if (g.stride_w == 1 && avx2) {
          copy_block_avx2(row + oh_lo * ow_n + ow_lo, ow_n, first + ow_lo, g.stride_h * g.in_w, oh_hi - oh_lo,
                          ow_hi - ow_lo);
          if (oh_lo == 0 && oh_hi == oh_n && ow_lo == 0 && ow_hi == ow_n) continue;  // no padding to fill
        }
#endif
        if (oh_lo > 0) std::memset(row, 0, sizeof(float) * static_cast<size_t>(oh_lo * ow_n));
        for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
          float* dst = row + oh * ow_n;
          const float* src = first + (oh - oh_lo) * g.stride_h * g.in_w;
          for (int64_t ow = 0; ow < ow_lo; ++ow) dst[ow] = 0.0f;
          if (g.stride_w == 1 && avx2) {
            // copied above
          } else if (g.stride_w == 1) {
            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = src[ow];
          } else {
            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = src[ow * g.stride_w];
          }
          for (int64_t ow = ow_hi; ow < ow_n; ++ow) dst[ow] = 0.0f;
        }
        if (oh_hi < oh_n)
          std::memset(row + oh_hi * ow_n, 0, sizeof(float) * static_cast<size_t>((oh_n - oh_hi) * ow_n));
      }
    }
  }
}

void col2im_add(const Conv2dGeometry& g, const float* col, float* dx) {
  const int64_t oh_n = g.out_h, ow_n = g.out_w, plane = out_plane(g);
  [[maybe_unused]] const bool avx2 = use_avx2();
  for (int64_t ci = 0; ci < in_per_group(g); ++ci) {
    float* dc = dx + ci * in_plane(g);
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      int64_t oh_lo = 0, oh_hi = 0;
      valid_outputs(g.in_h, oh_n, g.stride_h, kh * g.dilation_h - g.pad_h, oh_lo, oh_hi);
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const float* row = col + ((ci * g.kernel_h + kh) * g.kernel_w + kw) * plane;
        const int64_t w_off = kw * g.dilation_w - g.pad_w;
        int64_t ow_lo = 0, ow_hi = 0;
        valid_outputs(g.in_w, ow_n, g.stride_w, w_off, ow_lo, ow_hi);
#if TESSERA_X86_KERNELS
        if (g.stride_w == 1 && avx2) {
          if (oh_lo < oh_hi)
            add_block_avx2(dc + (oh_lo * g.stride_h + kh * g.dilation_h - g.pad_h) * g.in_w + w_off + ow_lo,
                           g.stride_h * g.in_w, row + oh_lo * ow_n + ow_lo, ow_n, oh_hi - oh_lo, ow_hi - ow_lo);
          continue;
        }
#endif
        for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
          const float* src = row + oh * ow_n;
          float* dst = dc + (oh * g.stride_h + kh * g.dilation_h - g.pad_h) * g.in_w + w_off;
          if (g.stride_w == 1) {
            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] += src[ow];
          } else {
            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow * g.stride_w] += src[ow];
          }
        }
      }
    }
  }
}

Split split_of(const Conv2dGeometry& g, runtime::ThreadPool& pool) {
  const int64_t tasks = g.batch * g.groups;
  const int64_t threads = pool.size();
  if (tasks >= threads && threads > 1) return {threads, true};
  return {1, false};
}

}  // namespace conv_detail
}  // namespace tessera::kernels
