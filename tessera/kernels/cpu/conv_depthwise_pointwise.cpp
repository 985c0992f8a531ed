// A depthwise convolution and the pointwise one that alone reads it (conv.h), band by band: at batch 16
// MobileNetV2's depthwise layers stream their planes at 10-13 GB/s per core, and writing the result
// only for the 1x1 projection to read it back doubles what they move. Here a task computes the
// depthwise rows [oh0, oh1) of every channel of one image into a per-thread band (about 256 KiB, so it
// stays in L2), then the pointwise product over those pixels straight from the band
// (conv_pointwise_avx512.cpp's pixel-vector tiles with the band's channel stride), and stores only the
// pointwise output.
#include <algorithm>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/conv_depthwise.h"
#include "tessera/kernels/cpu/conv_pointwise.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/runtime/thread_scratch.h"

namespace tessera::kernels {

namespace {

bool depthwise_feeds_pointwise(const Conv2dGeometry& dw, const Conv2dGeometry& pw) {
  return conv_detail::is_depthwise(dw) && conv_detail::is_pointwise(pw) && pw.groups == 1 && pw.batch == dw.batch &&
         pw.in_channels == dw.out_channels && pw.in_h == dw.out_h && pw.in_w == dw.out_w;
}

// Output rows per band: about 256 KiB of depthwise outputs (all channels), a multiple of interior_3x3's
// 4-row blocks where more than 4 fit, and small enough to give each thread a few bands when there
// are fewer images than that.
int64_t depthwise_band_rows(const Conv2dGeometry& dw, int threads) {
  int64_t rows = std::clamp<int64_t>(65536 / std::max<int64_t>(1, dw.out_channels * dw.out_w), 1, dw.out_h);
  const int64_t bands_wanted = (2 * threads + dw.batch - 1) / dw.batch;
  rows = std::min(rows, std::max<int64_t>(1, (dw.out_h + bands_wanted - 1) / bands_wanted));
  return rows > 4 ? rows / 4 * 4 : rows;
}

// The pointwise product of one band without AVX-512: y[n, co, p0 + i] = tail(bias[co] + sum_c w[co, c]
// band[c * pixels + i]).
void portable_band_product(const Conv2dGeometry& pw, const float* w, const float* bias, const ConvEpilogue& e,
                           const float* band, int64_t pixels, float* y, int64_t n, int64_t p0) {
  const int64_t plane = pw.out_h * pw.out_w;
  for (int64_t co = 0; co < pw.out_channels; ++co) {
    const int64_t offset = (n * pw.out_channels + co) * plane + p0;
    float* out = y + offset;
    const float b = bias != nullptr ? bias[co] : 0.0f;
    for (int64_t i = 0; i < pixels; ++i) out[i] = b;
    for (int64_t c = 0; c < pw.in_channels; ++c) {
      const float wv = w[co * pw.in_channels + c];
      const float* in = band + c * pixels;
      for (int64_t i = 0; i < pixels; ++i) out[i] += wv * in[i];
    }
    apply_activation(e.activation, out, pixels);
    if (e.residual != nullptr) {
      for (int64_t i = 0; i < pixels; ++i) out[i] += e.residual[offset + i];
    }
    apply_activation(e.post_activation, out, pixels);
  }
}

}  // namespace

bool conv2d_depthwise_pointwise_fuses(const Conv2dGeometry& dw, const Conv2dGeometry& pw) {
  // Measured with bench_conv --depthwise-pointwise on MobileNetV2's pairs (2 threads, batch 16, a
  // loaded machine): 1.35-2.3x the two calls where the depthwise result is 7 MiB and more on planes
  // of 28x28 and up (the 1x1 reads its band from L2 instead of memory); about even on 14x14 planes of
  // as many bytes, where the pointwise tiles of a band are short; 0.8-0.9x on smaller results, and
  // 0.7-0.95x at batch 1 (1 thread), whose results stay in the caches anyway.
  const int64_t result_bytes = 4 * dw.batch * dw.out_channels * dw.out_h * dw.out_w;
  return depthwise_feeds_pointwise(dw, pw) && use_avx512() && conv_detail::can_run_depthwise_avx512(dw) &&
         conv_detail::pointwise_rows_can_run(pw) && pw.out_h * pw.out_w >= 784 && result_bytes >= (int64_t{4} << 20);
}

int64_t conv2d_depthwise_pointwise_workspace_bytes(const Conv2dGeometry& dw, const Conv2dGeometry& pw,
                                                   bool weights_packed) {
  (void)dw;
  return conv_detail::pointwise_rows_may_apply(pw) ? conv_detail::pointwise_rows_workspace_bytes(pw, weights_packed)
                                                   : 0;
}

void conv2d_depthwise_pointwise_forward(const Conv2dGeometry& dw, const float* x, const float* dw_w,
                                        const float* dw_bias, Activation dw_activation, const Conv2dGeometry& pw,
                                        const float* pw_w, const float* pw_bias, float* y, void* workspace,
                                        const ConvEpilogue& epilogue, runtime::ThreadPool* pool,
                                        const float* pw_packed) {
  check_conv2d_geometry(dw, "conv2d_depthwise_pointwise_forward (depthwise)");
  check_conv2d_geometry(pw, "conv2d_depthwise_pointwise_forward (pointwise)");
  TESSERA_CHECK(depthwise_feeds_pointwise(dw, pw),
                "conv2d_depthwise_pointwise_forward: not a depthwise convolution and a pointwise one on its result");
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const int64_t width = dw.out_w, plane = dw.out_h * dw.out_w, channels = dw.out_channels;
  if (dw.batch == 0 || plane == 0) return;
  // The AVX-512 depthwise rows apply the activations that fit in registers (activation_avx512.h).
  const bool in_registers = dw_activation == Activation::none || dw_activation == Activation::relu ||
                            dw_activation == Activation::relu6;
  const bool vectorised = use_avx512() && conv_detail::can_run_depthwise_avx512(dw) &&
                          conv_detail::pointwise_rows_can_run(pw) && in_registers;
  const bool given = pw_packed != nullptr && conv_detail::pointwise_rows_packed_for(pw, pw_packed);
  conv_detail::Workspace ws(given ? nullptr : workspace,
                            vectorised && !given ? conv_detail::pointwise_rows_workspace_bytes(pw, false) : 0);
  const float* packed = pw_packed;
  if (vectorised && !given) {
    conv_detail::pointwise_rows_pack_weights(pw, pw_w, ws.floats(), tp);
    packed = ws.floats();
  }
  const conv_detail::DepthwiseMasks masks = vectorised ? conv_detail::depthwise_masks(dw) : conv_detail::DepthwiseMasks{};
  const int64_t rows = depthwise_band_rows(dw, tp.size()), bands = (dw.out_h + rows - 1) / rows;
  const int64_t multiplier = dw.out_channels / dw.groups, taps = dw.kernel_h * dw.kernel_w;
  const int64_t in_plane = dw.in_h * dw.in_w;
  tp.parallel_tasks(dw.batch * bands, [&](int64_t t0, int64_t t1) {
    float* band = runtime::thread_scratch_of<float>(runtime::ScratchSlot::depthwise_band,
                                                    static_cast<size_t>(channels * rows * width));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / bands, oh0 = t % bands * rows, oh1 = std::min(dw.out_h, oh0 + rows);
      const int64_t pixels = (oh1 - oh0) * width;
      // The input rows this band reads of a channel lie together, but each channel's are a short run
      // (a few KiB) the hardware's streams barely start on before the next plane: fetch the next
      // channel's while this one computes.
      const int64_t ih0 = std::max<int64_t>(0, oh0 * dw.stride_h - dw.pad_h);
      const int64_t ih1 = std::min(dw.in_h, (oh1 - 1) * dw.stride_h - dw.pad_h + (dw.kernel_h - 1) * dw.dilation_h + 1);
      const int64_t run = std::max<int64_t>(0, ih1 - ih0) * dw.in_w;
      for (int64_t c = 0; c < channels; ++c) {
        const float* xc = x + (n * dw.in_channels + c / multiplier) * in_plane;
        if (c + 1 < channels) {
          const float* next = x + (n * dw.in_channels + (c + 1) / multiplier) * in_plane + ih0 * dw.in_w;
          for (int64_t i = 0; i < run; i += 16) __builtin_prefetch(next + i);
        }
        const float b = dw_bias != nullptr ? dw_bias[c] : 0.0f;
        if (vectorised) {
          conv_detail::DepthwiseTail tail;
          tail.activation = dw_activation;
          tail.first_row = oh0;
          conv_detail::depthwise_rows_avx512(dw, masks, xc, dw_w + c * taps, b, tail, band + c * pixels, oh1);
        } else {
          conv_detail::depthwise_rows(dw, xc, dw_w + c * taps, b, dw_activation, band + c * pixels, oh0, oh1);
        }
      }
      if (vectorised) {
        conv_detail::pointwise_rows_pixels(pw, packed, pw_bias, epilogue, band, pixels, y, n, oh0 * width,
                                           oh1 * width);
      } else {
        portable_band_product(pw, pw_w, pw_bias, epilogue, band, pixels, y, n, oh0 * width);
      }
    }
  });
}

}  // namespace tessera::kernels
