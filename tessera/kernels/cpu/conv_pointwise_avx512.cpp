// Pointwise convolutions by pixel vectors on AVX-512 (conv_pointwise.h): a tile is 8 output channels x
// up to 48 pixels of one image's plane (three vectors; the plane's last one masked). Per input channel
// it loads the pixels' vectors straight from the image and broadcasts the channels' 8 weights: 24 FMAs
// for 3 loads and 8 broadcasts. A task takes a range of pixels of one image and runs every channel
// block over spans of them whose inputs stay in L2.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/conv_pointwise.h"

#include <algorithm>

#include "tessera/kernels/cpu/activation.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/kernels/cpu/activation_avx512.h"
#endif

namespace tessera::kernels::conv_detail {

#if TESSERA_X86_KERNELS

namespace {

constexpr int64_t kHeaderFloats = 16;
constexpr int64_t kPixels = 48;

// What every tile of one call shares.
struct Pointwise {
  const Conv2dGeometry* g;
  const float* weights;  // after the header
  const float* bias;
  ConvEpilogue epilogue;
  bool fused;  // both activations run in registers
  int64_t in_stride;   // floats between input channels: the plane, or a band's pixels
  int64_t out_stride;  // floats between output channels (and residual ones): the plane, or a band's pixels
};

// Channels [8 b, 8 b + 8) x NV vectors of pixels from x / y (channel 0 at the tile's first pixel; the
// residual's at epilogue.residual + offset); the last vector keeps the lanes of `last`.
template <int NV>
__attribute__((target("avx512f"))) void tile(const Pointwise& d, const float* x, int64_t b, float* y, int64_t offset,
                                             __mmask16 last) {
  const Conv2dGeometry& g = *d.g;
  const int64_t co0 = b * kPointwiseRows, rows = std::min(kPointwiseRows, g.out_channels - co0);
  const float* w = d.weights + b * g.in_channels * kPointwiseRows;
  __m512 acc[kPointwiseRows][NV];
#pragma GCC unroll 8
  for (int r = 0; r < kPointwiseRows; ++r) {
    const __m512 bias = _mm512_set1_ps(d.bias != nullptr && r < rows ? d.bias[co0 + r] : 0.0f);
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) acc[r][j] = bias;
  }
  const float* xc = x;
  for (int64_t ci = 0; ci < g.in_channels; ++ci, xc += d.in_stride, w += kPointwiseRows) {
    __m512 col[NV];
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j)
      col[j] = j == NV - 1 ? _mm512_maskz_loadu_ps(last, xc + 16 * j) : _mm512_loadu_ps(xc + 16 * j);
#pragma GCC unroll 8
    for (int r = 0; r < kPointwiseRows; ++r) {
      const __m512 a = _mm512_set1_ps(w[r]);
#pragma GCC unroll 3
      for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_fmadd_ps(a, col[j], acc[r][j]);
    }
  }
  const Activation first = d.fused ? d.epilogue.activation : Activation::none;
  // Unrolled, so that acc is only indexed by constants and stays in registers through the loop above.
#pragma GCC unroll 8
  for (int r = 0; r < kPointwiseRows; ++r) {
    if (r >= rows) break;
    float* out = y + (co0 + r) * d.out_stride;
    const float* residual =
        d.epilogue.residual != nullptr ? d.epilogue.residual + offset + (co0 + r) * d.out_stride : nullptr;
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) {
      const __mmask16 m = j == NV - 1 ? last : static_cast<__mmask16>(0xFFFF);
      __m512 v = activate_avx512(first, acc[r][j]);
      if (d.fused) {
        if (residual != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, residual + 16 * j));
        v = activate_avx512(d.epilogue.post_activation, v);
      }
      _mm512_mask_storeu_ps(out + 16 * j, m, v);
    }
    if (!d.fused) {
      const int64_t count = 16 * (NV - 1) + __builtin_popcount(last);
      for (int64_t i = 0; i < count; ++i) {
        float value = activation_value(d.epilogue.activation, out[i]);
        if (residual != nullptr) value += residual[i];
        out[i] = activation_value(d.epilogue.post_activation, value);
      }
    }
  }
}

// `count` pixels, every channel block, input channel c of pixel i at xs[c * in_stride + i], output at
// ys[c * out_stride + i] (the residual's at epilogue.residual + offset + the same): spans of pixels
// whose inputs stay in L2, each channel block over a whole span, so that the stores run along 8
// planes rather than across all.
void pixel_span(const Pointwise& d, const float* xs, float* ys, int64_t offset, int64_t count) {
  const Conv2dGeometry& g = *d.g;
  const int64_t blocks = (g.out_channels + kPointwiseRows - 1) / kPointwiseRows;
  // About 128 KiB of inputs a span (bench_conv --pointwise, batch 16: 16->96 on 112x112 5.1 ms against
  // 7.2 ms tile by tile across all channels, and 6.1 ms by the implicit GEMM).
  const int64_t span = kPixels * std::clamp<int64_t>(32768 / (kPixels * g.in_channels), 1, 64);
  for (int64_t s0 = 0; s0 < count; s0 += span) {
    const int64_t s1 = std::min(count, s0 + span);
    for (int64_t b = 0; b < blocks; ++b) {
      for (int64_t p = s0; p < s1; p += kPixels) {
        const int64_t n = std::min(kPixels, s1 - p), vectors = (n + 15) / 16;
        const auto last = static_cast<__mmask16>((1u << (n - 16 * (vectors - 1))) - 1);
        if (vectors == 3) {
          tile<3>(d, xs + p, b, ys + p, offset + p, last);
        } else if (vectors == 2) {
          tile<2>(d, xs + p, b, ys + p, offset + p, last);
        } else {
          tile<1>(d, xs + p, b, ys + p, offset + p, last);
        }
      }
    }
  }
}

}  // namespace

void pointwise_rows_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                            const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                            runtime::ThreadPool& pool) {
  const bool given = packed_weights != nullptr && pointwise_rows_packed_for(g, packed_weights);
  // A workspace the caller sized for packed weights has no room to pack them now.
  Workspace ws(packed_weights == nullptr || given ? workspace : nullptr, pointwise_rows_workspace_bytes(g, given));
  const float* packed = packed_weights;
  if (!given) {
    pointwise_rows_pack_weights(g, w, ws.floats(), pool);
    packed = ws.floats();
  }
  const Pointwise d{&g,
                    packed + kHeaderFloats,
                    bias,
                    epilogue,
                    activation_in_registers(epilogue.activation) && activation_in_registers(epilogue.post_activation),
                    g.out_h * g.out_w,
                    g.out_h * g.out_w};
  const int64_t plane = g.out_h * g.out_w;
  // Tasks: ranges of whole 48-pixel tiles of one image, at least about 64K multiply-adds each and up
  // to four per thread per image.
  const int64_t tiles = (plane + kPixels - 1) / kPixels;
  const int64_t macs_per_tile = kPixels * g.in_channels * g.out_channels;
  const int64_t min_tiles = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, macs_per_tile));
  const int64_t per_image =
      std::clamp<int64_t>(std::min(tiles / min_tiles, (4 * pool.size() + g.batch - 1) / g.batch), 1, tiles);
  pool.parallel_tasks(g.batch * per_image, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / per_image, part = t % per_image;
      const int64_t p0 = tiles * part / per_image * kPixels, p1 = std::min(plane, tiles * (part + 1) / per_image * kPixels);
      const int64_t offset = n * g.out_channels * plane + p0;
      pixel_span(d, x + n * g.in_channels * plane + p0, y + offset, offset, p1 - p0);
    }
  });
}

void pointwise_rows_pixels(const Conv2dGeometry& g, const float* packed_weights, const float* bias,
                           const ConvEpilogue& epilogue, const float* x, int64_t in_stride, float* y,
                           int64_t out_stride, int64_t residual_offset, int64_t count) {
  const Pointwise d{&g,
                    packed_weights + kHeaderFloats,
                    bias,
                    epilogue,
                    activation_in_registers(epilogue.activation) && activation_in_registers(epilogue.post_activation),
                    in_stride,
                    out_stride};
  pixel_span(d, x, y, residual_offset, count);
}

#else

void pointwise_rows_forward(const Conv2dGeometry&, const float*, const float*, const float*, const float*, float*,
                            void*, const ConvEpilogue&, runtime::ThreadPool&) {}
void pointwise_rows_pixels(const Conv2dGeometry&, const float*, const float*, const ConvEpilogue&, const float*,
                           int64_t, float*, int64_t, int64_t, int64_t) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::conv_detail
