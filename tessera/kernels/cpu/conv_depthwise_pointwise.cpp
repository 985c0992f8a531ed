// A depthwise convolution and the pointwise one that alone reads it (conv.h), band by band: at batch 16
// MobileNetV2's depthwise layers stream their planes at 10-13 GB/s per core, and writing the result
// only for the 1x1 projection to read it back doubles what they move. Here a task computes the
// depthwise rows [oh0, oh1) of every channel of one image into a per-thread band (about 256 KiB, so it
// stays in L2), then the pointwise product over those pixels straight from the band
// (conv_pointwise_avx512.cpp's pixel-vector tiles with the band's channel stride), and stores only the
// pointwise output. With an expansion before the depthwise convolution (ConvExpansion), the task first
// computes the expanded input rows its band reads into a second buffer (about 512 KiB), so the
// expansion's result does not go to memory either.
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

bool expansion_feeds_depthwise(const Conv2dGeometry& e, const Conv2dGeometry& dw) {
  return conv_detail::is_pointwise(e) && e.groups == 1 && e.batch == dw.batch && e.out_channels == dw.in_channels &&
         e.out_h == dw.in_h && e.out_w == dw.in_w;
}

// The input rows [lo, hi) that output rows [oh0, oh1) of dw read.
void input_rows(const Conv2dGeometry& dw, int64_t oh0, int64_t oh1, int64_t& lo, int64_t& hi) {
  lo = std::clamp<int64_t>(oh0 * dw.stride_h - dw.pad_h, 0, dw.in_h);
  hi = std::clamp<int64_t>((oh1 - 1) * dw.stride_h - dw.pad_h + (dw.kernel_h - 1) * dw.dilation_h + 1, lo, dw.in_h);
}

// Output rows per band: about 256 KiB of depthwise outputs (all channels), and with an expansion
// about 512 KiB of expanded input rows; a multiple of interior_3x3's 4-row blocks where more than 4
// fit, and small enough to give each thread a few bands when there are fewer images than that.
int64_t depthwise_band_rows(const Conv2dGeometry& dw, int threads, bool expanded) {
  int64_t rows = std::clamp<int64_t>(65536 / std::max<int64_t>(1, dw.out_channels * dw.out_w), 1, dw.out_h);
  if (expanded) {
    const int64_t in_rows = 131072 / std::max<int64_t>(1, dw.in_channels * dw.in_w);
    const int64_t reach = (dw.kernel_h - 1) * dw.dilation_h + 1;
    rows = std::min(rows, std::max<int64_t>(1, (in_rows - reach) / dw.stride_h + 1));
  }
  const int64_t bands_wanted = (2 * threads + dw.batch - 1) / dw.batch;
  rows = std::min(rows, std::max<int64_t>(1, (dw.out_h + bands_wanted - 1) / bands_wanted));
  return rows > 4 ? rows / 4 * 4 : rows;
}

// A pointwise product without AVX-512: out[co * out_stride + i] = bias[co] + sum_c w[co, c]
// in[c * in_stride + i] for `count` pixels.
void portable_product(const Conv2dGeometry& g, const float* w, const float* bias, const float* in, int64_t in_stride,
                      float* out, int64_t out_stride, int64_t count) {
  for (int64_t co = 0; co < g.out_channels; ++co) {
    float* o = out + co * out_stride;
    const float b = bias != nullptr ? bias[co] : 0.0f;
    for (int64_t i = 0; i < count; ++i) o[i] = b;
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const float wv = w[co * g.in_channels + c];
      const float* src = in + c * in_stride;
      for (int64_t i = 0; i < count; ++i) o[i] += wv * src[i];
    }
  }
}

// The tail of the last pointwise product without AVX-512, on `count` pixels of each output channel
// (channel co at y[co * plane], the residual's at residual[co * plane]).
void portable_tail(const Conv2dGeometry& pw, const ConvEpilogue& e, float* y, const float* residual, int64_t count) {
  const int64_t plane = pw.out_h * pw.out_w;
  for (int64_t co = 0; co < pw.out_channels; ++co) {
    float* o = y + co * plane;
    apply_activation(e.activation, o, count);
    if (residual != nullptr) {
      for (int64_t i = 0; i < count; ++i) o[i] += residual[co * plane + i];
    }
    apply_activation(e.post_activation, o, count);
  }
}

bool activation_fits_registers(Activation a) {
  return a == Activation::none || a == Activation::relu || a == Activation::relu6;
}

// Weights in the pixel-vector layout: the packed ones when they are, else packed into `into`.
const float* rows_packed(const Conv2dGeometry& g, const float* w, const float* packed, float* into,
                         runtime::ThreadPool& pool) {
  if (packed != nullptr && conv_detail::pointwise_rows_packed_for(g, packed)) return packed;
  conv_detail::pointwise_rows_pack_weights(g, w, into, pool);
  return into;
}

}  // namespace

bool conv2d_depthwise_pointwise_fuses(const Conv2dGeometry& dw, const Conv2dGeometry& pw) {
  // bench_conv --depthwise-pointwise (one pair at a time, its data warm in the caches) found the pair
  // 1.35-2.3x faster as one step at batch 16 where the depthwise result is 7 MiB and more on planes of
  // 28x28 and up, about even on 14x14 planes and 0.7-0.95x at batch 1. In the whole model the
  // separate steps lose more: each splits its work over the threads its own way (the depthwise one by
  // channels, the 1x1 ones by pixels or by output channels), so on two threads about half of every
  // step's input was written by the other core and comes from its cache, and a batch-1 depthwise step
  // ran slower on two threads than on one (144 channels on 56x56: 0.18 ms against 0.17). The bands of
  // the fused step are a thread's from the expansion to the projection. MobileNetV2 in
  // bench_onnx_model, two threads, interleaved runs on a quiet machine: batch 1 4.26/4.24/4.64 ms
  // with the old rule (28x28 and up, 4 MiB and up), 3.96-4.43 fusing every 28x28 block, 3.61/3.62/3.97
  // fusing the 14x14 ones too (with their expansions), 4.16-4.71 fusing the 7x7 ones as well (too few
  // rows to band); batch 16 about 48-51 ms against 55.
  return depthwise_feeds_pointwise(dw, pw) && use_avx512() && conv_detail::can_run_depthwise_avx512(dw) &&
         conv_detail::pointwise_rows_can_run(pw) && pw.out_h * pw.out_w >= 196;
}

bool conv2d_expand_depthwise_pointwise_fuses(const Conv2dGeometry& expand, const Conv2dGeometry& dw,
                                             const Conv2dGeometry& pw) {
  // Measured the same way (batch 16, 2 threads): on MobileNetV2's blocks whose pair fuses, 1.2-1.4x the
  // three calls (16->96 then the 96-channel stride-2 depthwise on 112x112: 12.8 -> 9.1 ms), 1.15-1.4x
  // the fused pair after a separate expansion: its result is as large as the depthwise input. In the
  // whole model, at batch 1 too, for the reason above (the measurements there are with expansions).
  return conv2d_depthwise_pointwise_fuses(dw, pw) && expansion_feeds_depthwise(expand, dw) &&
         conv_detail::pointwise_rows_can_run(expand);
}

int64_t conv2d_depthwise_pointwise_workspace_bytes(const Conv2dGeometry& dw, const Conv2dGeometry& pw,
                                                   bool weights_packed, const Conv2dGeometry* expand) {
  (void)dw;
  if (weights_packed) return 0;
  int64_t bytes = conv_detail::pointwise_rows_may_apply(pw) ? conv_detail::pointwise_rows_workspace_bytes(pw, false) : 0;
  if (expand != nullptr && conv_detail::pointwise_rows_may_apply(*expand)) {
    bytes += conv_detail::pointwise_rows_workspace_bytes(*expand, false);
  }
  return bytes;
}

void conv2d_depthwise_pointwise_forward(const Conv2dGeometry& dw, const float* x, const float* dw_w,
                                        const float* dw_bias, Activation dw_activation, const Conv2dGeometry& pw,
                                        const float* pw_w, const float* pw_bias, float* y, void* workspace,
                                        const ConvEpilogue& epilogue, runtime::ThreadPool* pool,
                                        const float* pw_packed, const ConvExpansion* expand) {
  check_conv2d_geometry(dw, "conv2d_depthwise_pointwise_forward (depthwise)");
  check_conv2d_geometry(pw, "conv2d_depthwise_pointwise_forward (pointwise)");
  TESSERA_CHECK(depthwise_feeds_pointwise(dw, pw),
                "conv2d_depthwise_pointwise_forward: not a depthwise convolution and a pointwise one on its result");
  if (expand != nullptr) {
    check_conv2d_geometry(expand->g, "conv2d_depthwise_pointwise_forward (expansion)");
    TESSERA_CHECK(expansion_feeds_depthwise(expand->g, dw),
                  "conv2d_depthwise_pointwise_forward: the expansion is not a pointwise convolution into the depthwise one");
  }
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const int64_t width = dw.out_w, plane = dw.out_h * dw.out_w, channels = dw.out_channels;
  if (dw.batch == 0 || plane == 0) return;
  // The AVX-512 depthwise rows and pixel-vector tiles apply the activations that fit in registers.
  const bool vectorised = use_avx512() && conv_detail::can_run_depthwise_avx512(dw) &&
                          conv_detail::pointwise_rows_can_run(pw) && activation_fits_registers(dw_activation) &&
                          (expand == nullptr || conv_detail::pointwise_rows_can_run(expand->g));
  const int64_t pw_floats = vectorised ? conv_detail::pointwise_rows_workspace_bytes(pw, false) / 4 : 0;
  const int64_t expand_floats =
      vectorised && expand != nullptr ? conv_detail::pointwise_rows_workspace_bytes(expand->g, false) / 4 : 0;
  // Packed here only for weights that do not come packed (the workspace is sized for that case).
  const bool all_packed = vectorised && pw_packed != nullptr && conv_detail::pointwise_rows_packed_for(pw, pw_packed) &&
                          (expand == nullptr || (expand->packed != nullptr &&
                                                 conv_detail::pointwise_rows_packed_for(expand->g, expand->packed)));
  conv_detail::Workspace ws(all_packed ? nullptr : workspace, all_packed ? 0 : 4 * (pw_floats + expand_floats));
  const float* packed = vectorised ? rows_packed(pw, pw_w, pw_packed, ws.floats(), tp) : nullptr;
  const float* expand_packed =
      vectorised && expand != nullptr
          ? rows_packed(expand->g, expand->w, expand->packed, ws.floats() == nullptr ? nullptr : ws.floats() + pw_floats, tp)
          : nullptr;  // no scratch (null) when every weight is packed already: no offset into it
  const conv_detail::DepthwiseMasks masks = vectorised ? conv_detail::depthwise_masks(dw) : conv_detail::DepthwiseMasks{};
  const int64_t rows = depthwise_band_rows(dw, tp.size(), expand != nullptr), bands = (dw.out_h + rows - 1) / rows;
  const int64_t multiplier = dw.out_channels / dw.groups, taps = dw.kernel_h * dw.kernel_w;
  const int64_t in_plane = dw.in_h * dw.in_w;
  // The expanded rows a band reads: at most those of `rows` output rows.
  const int64_t band_floats = conv_detail::padded_floats(channels * rows * width);
  const int64_t expanded_floats =
      expand != nullptr ? dw.in_channels * std::min(dw.in_h, (rows - 1) * dw.stride_h + (dw.kernel_h - 1) * dw.dilation_h + 1) * dw.in_w
                        : 0;
  tp.parallel_tasks(dw.batch * bands, [&](int64_t t0, int64_t t1) {
    float* band = runtime::thread_scratch_of<float>(runtime::ScratchSlot::depthwise_band,
                                                    static_cast<size_t>(band_floats + expanded_floats));
    float* expanded = band + band_floats;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / bands, oh0 = t % bands * rows, oh1 = std::min(dw.out_h, oh0 + rows);
      const int64_t pixels = (oh1 - oh0) * width;
      int64_t ih0 = 0, ih1 = 0;
      input_rows(dw, oh0, oh1, ih0, ih1);
      const int64_t run = (ih1 - ih0) * dw.in_w;
      // The depthwise input: the image's planes, or the expanded rows [ih0, ih1) of each channel.
      const float* source = x + n * dw.in_channels * in_plane;
      int64_t source_stride = in_plane, source_row0 = 0;
      if (expand != nullptr) {
        const float* xe = x + n * expand->g.in_channels * in_plane + ih0 * dw.in_w;
        if (vectorised) {
          ConvEpilogue e;
          e.activation = expand->activation;
          conv_detail::pointwise_rows_pixels(expand->g, expand_packed, expand->bias, e, xe, in_plane, expanded, run, 0,
                                             run);
        } else {
          portable_product(expand->g, expand->w, expand->bias, xe, in_plane, expanded, run, run);
          for (int64_t c = 0; c < dw.in_channels; ++c) apply_activation(expand->activation, expanded + c * run, run);
        }
        source = expanded;
        source_stride = run;
        source_row0 = ih0;
      }
      for (int64_t c = 0; c < channels; ++c) {
        const float* xc = source + c / multiplier * source_stride;
        // The input rows this band reads of a channel lie together, but each channel's are a short run
        // (a few KiB) the hardware's streams barely start on before the next plane: fetch the next
        // channel's while this one computes.
        if (expand == nullptr && c + 1 < channels) {
          const float* next = source + (c + 1) / multiplier * source_stride + ih0 * dw.in_w;
          for (int64_t i = 0; i < run; i += 16) __builtin_prefetch(next + i);
        }
        const float b = dw_bias != nullptr ? dw_bias[c] : 0.0f;
        if (vectorised) {
          conv_detail::DepthwiseTail tail;
          tail.activation = dw_activation;
          tail.first_row = oh0;
          tail.input_first_row = source_row0;
          conv_detail::depthwise_rows_avx512(dw, masks, xc, dw_w + c * taps, b, tail, band + c * pixels, oh1);
        } else {
          conv_detail::depthwise_rows(dw, xc, source_row0, dw_w + c * taps, b, dw_activation, band + c * pixels, oh0,
                                      oh1);
        }
      }
      const int64_t offset = n * pw.out_channels * plane + oh0 * width;
      if (vectorised) {
        conv_detail::pointwise_rows_pixels(pw, packed, pw_bias, epilogue, band, pixels, y + offset, plane, offset,
                                           pixels);
      } else {
        portable_product(pw, pw_w, pw_bias, band, pixels, y + offset, plane, pixels);
        portable_tail(pw, epilogue, y + offset, epilogue.residual != nullptr ? epilogue.residual + offset : nullptr,
                      pixels);
      }
    }
  });
}

}  // namespace tessera::kernels
