// Depthwise convolution forward (one input channel per group, as MobileNet's 3x3 blocks): im2col +
// GEMM degenerates there into a 1-row product per channel, so each output plane is accumulated
// directly, row by row while the row stays in L1 (16 outputs per vector with AVX-512:
// conv_depthwise_avx512.cpp), and the planes are spread over the threads.
#include <algorithm>

#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/conv_depthwise.h"
#include "tessera/kernels/cpu/cpu_features.h"

namespace tessera::kernels::conv_detail {

namespace {

// Rows [begin, end) of one output plane, row `begin` at y:
// y[oh, ow] = bias + sum over taps of w[kh, kw] * x[oh*s + kh*d - p, ow*s + kw*d - p].
void portable_plane_rows(const Conv2dGeometry& g, const float* x, int64_t x_row0, const float* w, float bias, float* y,
                         int64_t begin, int64_t end) {
  for (int64_t oh = begin; oh < end; ++oh) {
    float* yr = y + (oh - begin) * g.out_w;
    for (int64_t ow = 0; ow < g.out_w; ++ow) yr[ow] = bias;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h + kh * g.dilation_h - g.pad_h;
      if (ih < 0 || ih >= g.in_h) continue;
      const float* xr = x + (ih - x_row0) * g.in_w;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const float wv = w[kh * g.kernel_w + kw];
        const int64_t w_off = kw * g.dilation_w - g.pad_w;
        int64_t lo = 0, hi = 0;
        valid_outputs(g.in_w, g.out_w, g.stride_w, w_off, lo, hi);
        const float* xs = xr + w_off;
        if (g.stride_w == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xs[ow];
        } else if (g.stride_w == 2) {
          for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xs[2 * ow];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xs[ow * g.stride_w];
        }
      }
    }
  }
}

}  // namespace

bool is_depthwise(const Conv2dGeometry& g) { return g.groups > 1 && in_per_group(g) == 1; }

void conv2d_depthwise_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias, float* y,
                              const ConvEpilogue& epilogue, runtime::ThreadPool& pool) {
  const int64_t plane = out_plane(g), multiplier = out_per_group(g);
  const int64_t planes = g.batch * g.out_channels;
  // At least about 16K multiply-adds per task keeps the pool's overhead small for the 7x7 planes too;
  // up to four tasks per thread, claimed by whichever thread is free (a shared machine).
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, plane * taps(g)));
  const int64_t tasks = std::min<int64_t>((planes + grain - 1) / grain, pool.size() == 1 ? 1 : 4 * pool.size());
  const bool vectorised = use_avx512() && can_run_depthwise_avx512(g);
  const DepthwiseMasks masks = vectorised ? depthwise_masks(g) : DepthwiseMasks{};
  // Outputs far larger than the caches go out with non-temporal stores (DepthwiseTail::stream).
  const bool stream = vectorised && 4 * planes * plane > (int64_t{16} << 20);
  pool.parallel_tasks(tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t p = planes * t0 / tasks; p < planes * t1 / tasks; ++p) {
      const int64_t n = p / g.out_channels, co = p % g.out_channels;
      const float* xc = x + (n * g.in_channels + co / multiplier) * in_plane(g);
      float* yp = y + p * plane;
      DepthwiseTail tail{epilogue.activation, epilogue.residual != nullptr ? epilogue.residual + p * plane : nullptr,
                         epilogue.post_activation, stream};
      const float b = bias != nullptr ? bias[co] : 0.0f;
      if (vectorised) {
        depthwise_plane_avx512(g, masks, xc, w + co * taps(g), b, tail, yp);
      } else {
        portable_plane_rows(g, xc, 0, w + co * taps(g), b, yp, 0, g.out_h);
        finish_depthwise_plane(g, tail, yp);
      }
    }
    if (stream) depthwise_store_fence();
  });
}

void depthwise_rows(const Conv2dGeometry& g, const float* x, int64_t input_first_row, const float* w, float bias,
                    Activation activation, float* y, int64_t begin, int64_t end) {
  portable_plane_rows(g, x, input_first_row, w, bias, y, begin, end);
  apply_activation(activation, y, (end - begin) * g.out_w);
}

void finish_depthwise_plane(const Conv2dGeometry& g, const DepthwiseTail& tail, float* y) {
  const int64_t plane = out_plane(g);
  apply_activation(tail.activation, y, plane);
  if (tail.residual != nullptr) {
    for (int64_t i = 0; i < plane; ++i) y[i] += tail.residual[i];
  }
  apply_activation(tail.post_activation, y, plane);
}

}  // namespace tessera::kernels::conv_detail
