// Portable packing for the implicit-GEMM convolution: im2col panels gathered from the images, and
// the weights in MR-row panels.
#include "tessera/kernels/cpu/conv_pack.h"

#include <algorithm>
#include <cstring>

namespace tessera::kernels::conv_detail {

void pack_columns(const ColumnSource& src, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) {
  const Conv2dGeometry& g = *src.g;
  const int64_t plane = out_plane(g), taps_n = taps(g);
  if (cols < nr) {
    for (int64_t p = 0; p < kc; ++p) std::fill(dst + p * nr + cols, dst + (p + 1) * nr, 0.0f);
  }
  // A run: columns of one output row of one image, which read one input row per tap.
  for (int64_t c0 = 0; c0 < cols;) {
    const int64_t j = j0 + c0;
    const int64_t n = j / plane, q = j % plane, oh = q / g.out_w, ow0 = q % g.out_w;
    const int64_t len = std::min(cols - c0, g.out_w - ow0);
    const float* xn = src.x + n * src.image_stride;
    int64_t ci = p0 / taps_n, kh = p0 % taps_n / g.kernel_w, kw = p0 % g.kernel_w;
    for (int64_t p = 0; p < kc; ++p) {
      float* out = dst + p * nr + c0;
      const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) {
        std::fill(out, out + len, 0.0f);
      } else {
        const float* row = xn + ci * in_plane(g) + ih * g.in_w;
        const int64_t w_off = kw * g.dilation_w - g.pad_w;
        int64_t lo = 0, hi = 0;
        valid_outputs(g.in_w, g.out_w, g.stride_w, w_off, lo, hi);
        lo = std::clamp(lo - ow0, int64_t{0}, len);
        hi = std::clamp(hi - ow0, lo, len);
        const float* first = row + ow0 * g.stride_w + w_off;  // the tap of column c0 (maybe in the padding)
        for (int64_t c = 0; c < lo; ++c) out[c] = 0.0f;
        if (g.stride_w == 1) {
          for (int64_t c = lo; c < hi; ++c) out[c] = first[c];
        } else {
          for (int64_t c = lo; c < hi; ++c) out[c] = first[c * g.stride_w];
        }
        for (int64_t c = hi; c < len; ++c) out[c] = 0.0f;
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

void pack_weights(const Conv2dGeometry& g, const float* w, const RowPanels& panels, int64_t k_block, float* dst,
                  runtime::ThreadPool& pool) {
  const int64_t m = out_per_group(g), k = col_rows(g), count = panels.count();
  const int64_t per_group = packed_weight_floats_per_group(g, panels);
  pool.parallel_for(g.groups * count, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t gi = t / count, panel = t % count;
      const float* wg = w + gi * m * k;
      const int64_t i = panels.start(panel), rows = panels.rows(panel), stride = panels.stride(panel);
      for (int64_t p0 = 0; p0 < k; p0 += k_block) {
        const int64_t kc = std::min(k_block, k - p0);
        float* out = dst + gi * per_group + weight_panel_offset(panels, p0, kc, panel);
        for (int64_t p = 0; p < kc; ++p, out += stride) {
          for (int64_t r = 0; r < rows; ++r) out[r] = wg[(i + r) * k + p0 + p];
          for (int64_t r = rows; r < stride; ++r) out[r] = 0.0f;
        }
      }
    }
  });
}

}  // namespace tessera::kernels::conv_detail
