// The direct convolution in AVX-512 register tiles of up to 12 output pixels (consecutive in one output
// row) x 32 output channels: per tap, two vectors of packed weights and one broadcast of each pixel's
// input value (read straight from the image, or from a zero-padded copy of it when the convolution
// pads) feed 24 FMAs, over all of K without leaving the registers. The tile then turns to the output's
// layout (16 x 16 transposes), adds the bias, activation, residual and activation, and stores each
// channel's pixels. Tasks are blocks of output channels x ranges of output rows, claimed dynamically.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/conv_direct.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/cpu_features.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/kernels/cpu/activation_avx512.h"
#endif

namespace tessera::kernels::conv_detail {

namespace {

constexpr int64_t kChannels = 32;   // output channels per tile: two zmm
constexpr int64_t kMaxPixels = 14;  // pixels per tile: 28 accumulators (rows of 56, 28, 14 and 7 split evenly)
constexpr int64_t kHeaderFloats = 16;
constexpr int32_t kMagic = 0x44564e43;  // "CNVD"

struct Header {
  int32_t magic, out_channels, k;
  bool operator==(const Header&) const = default;
};

int64_t channel_blocks(const Conv2dGeometry& g) {
  return (g.out_channels + kChannels - 1) / kChannels;
}

bool pads(const Conv2dGeometry& g) {
  return g.pad_h > 0 || g.pad_w > 0;
}

// The input the tiles read: the image, or its zero-padded copy.
int64_t source_h(const Conv2dGeometry& g) {
  return g.in_h + 2 * g.pad_h;
}
int64_t source_w(const Conv2dGeometry& g) {
  return g.in_w + 2 * g.pad_w;
}
int64_t padded_input_floats(const Conv2dGeometry& g) {
  return pads(g) ? g.batch * g.in_channels * source_h(g) * source_w(g) : 0;
}

}  // namespace

bool direct_tiles_apply(const Conv2dGeometry& g) {
  // Short products (a 3-channel 3x3 stem: K = 27) spend more on turning each tile around than on it.
  // Pointwise ones too where they win (MobileNetV2's, one thread, against the implicit GEMM): those
  // that reduce 64+ channels run 1.05-1.4x faster at batch 1 and 16 (no panel copies, no padded
  // columns on 14x14 and 7x7 planes), those that expand them only over few columns (1.05-1.3x at
  // batch 1; 0.85-0.95x at batch 16); from 16-32 channels they run 0.75-0.9x as fast.
  if (is_pointwise(g) && g.in_channels < g.out_channels && g.batch * g.out_h * g.out_w > 1024) return false;
  return TESSERA_X86_KERNELS && use_avx512() && g.groups == 1 && col_rows(g) >= 64;
}

int64_t direct_tiles_packed_floats(const Conv2dGeometry& g) {
  return kHeaderFloats + channel_blocks(g) * kChannels * col_rows(g);
}

void direct_tiles_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool) {
  const int64_t k = col_rows(g);
  const Header h{kMagic, static_cast<int32_t>(g.out_channels), static_cast<int32_t>(k)};
  std::memset(dst, 0, sizeof(float) * kHeaderFloats);
  std::memcpy(dst, &h, sizeof(h));
  float* out = dst + kHeaderFloats;
  pool.parallel_for(channel_blocks(g), 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      float* block = out + b * kChannels * k;
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t c = 0; c < kChannels; ++c) {
          const int64_t co = b * kChannels + c;
          block[p * kChannels + c] = co < g.out_channels ? w[co * k + p] : 0.0f;
        }
      }
    }
  });
}

bool direct_tiles_packed_for(const Conv2dGeometry& g, const float* packed) {
  Header h;
  std::memcpy(&h, packed, sizeof(h));
  return h == Header{kMagic, static_cast<int32_t>(g.out_channels), static_cast<int32_t>(col_rows(g))};
}

int64_t direct_tiles_workspace_bytes(const Conv2dGeometry& g, bool weights_packed) {
  const int64_t weights = weights_packed ? 0 : padded_floats(direct_tiles_packed_floats(g));
  return 4 * (weights + padded_input_floats(g));
}

#if TESSERA_X86_KERNELS

namespace {

// r[i] (16 rows of 16) becomes column i. (maskz forms with full masks: GCC 12's -Wmaybe-uninitialized.)
__attribute__((target("avx512f"), always_inline)) inline void transpose16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(0xFFFF, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(0xFFFF, r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, a, b));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, a, b));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, c, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, c, d));
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i + 8], r[i + 12], 0xdd);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[i + 8], 0x88);
    r[i + 4] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i + 4], t[i + 12], 0x88);
    r[i + 8] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[i + 8], 0xdd);
    r[i + 12] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i + 4], t[i + 12], 0xdd);
  }
}

// What every tile of one call shares.
struct Direct {
  const Conv2dGeometry* g;
  const float* source;  // the (padded) input
  int64_t source_plane, source_w;
  const float* weights;  // after the header
  const float* bias;
  float* y;
  ConvEpilogue epilogue;
  bool fused;  // the activations run in registers
};

// One tile: R pixels from (n, oh, ow0) by the 32 channels of block b.
// With kTwoRows, the tile is two whole output rows of R / 2 pixels (narrow planes: 7 x 7 is 14 + 14 +
// 14 + 7), the second half reading one output row further down; their outputs are contiguous.
template <int R, int S, bool kTwoRows = false>
__attribute__((target("avx512f"))) void tile(const Direct& d, int64_t b, int64_t n, int64_t oh, int64_t ow0) {
  const Conv2dGeometry& g = *d.g;
  const int64_t stride = S != 0 ? S : g.stride_w;
  const int64_t row_step = g.dilation_h * d.source_w, tap_step = g.dilation_w;
  const int64_t next_row = g.stride_h * d.source_w;  // kTwoRows: from a pixel to the one below it
  const float* x = d.source + n * g.in_channels * d.source_plane + oh * g.stride_h * d.source_w + ow0 * stride;
  const float* w = d.weights + b * kChannels * col_rows(g);
  __m512 lo[R], hi[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t ci = 0; ci < g.in_channels; ++ci, x += d.source_plane) {
    const float* row = x;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh, row += row_step) {
      // The tiles of a row walk along it, each starting where the last ended: fetch this tap row's
      // part of the next tile (three lines ahead) while this one computes.
      _mm_prefetch(reinterpret_cast<const char*>(row + 48), _MM_HINT_T0);
      const float* p = row;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw, p += tap_step, w += kChannels) {
        const __m512 b0 = _mm512_loadu_ps(w), b1 = _mm512_loadu_ps(w + 16);  // a caller's workspace may be unaligned
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
          const __m512 a =
              _mm512_set1_ps(kTwoRows && r >= R / 2 ? p[next_row + (r - R / 2) * stride] : p[r * stride]);
          lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
          hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
        }
      }
    }
  }
  // The bias and first activation per channel vector, then each half turned to 16 channel rows.
  const int64_t co0 = b * kChannels, channels = std::min(kChannels, g.out_channels - co0);
  const auto lo_mask = static_cast<__mmask16>(channels >= 16 ? 0xFFFF : (1u << channels) - 1);
  const auto hi_mask = static_cast<__mmask16>(channels >= 32 ? 0xFFFF : channels <= 16 ? 0 : (1u << (channels - 16)) - 1);
  const __m512 bias_lo = d.bias != nullptr ? _mm512_maskz_loadu_ps(lo_mask, d.bias + co0) : _mm512_setzero_ps();
  const __m512 bias_hi = d.bias != nullptr ? _mm512_maskz_loadu_ps(hi_mask, d.bias + co0 + 16) : _mm512_setzero_ps();
  const Activation first = d.fused ? d.epilogue.activation : Activation::none;
  __m512 rows[16];
  const int64_t plane = g.out_h * g.out_w;
  const int64_t out_offset = (n * g.out_channels + co0) * plane + oh * g.out_w + ow0;
  const auto pixels = static_cast<__mmask16>((1u << R) - 1);
  for (int half = 0; half < 2; ++half) {
    const int64_t count = std::min<int64_t>(16, channels - 16 * half);
    if (count <= 0) break;
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) {
      rows[r] = r < R ? activate_avx512(first, _mm512_add_ps(half == 0 ? lo[r] : hi[r], half == 0 ? bias_lo : bias_hi))
                      : _mm512_setzero_ps();
    }
    transpose16(rows);
    for (int64_t c = 0; c < count; ++c) {
      const int64_t offset = out_offset + (16 * half + c) * plane;
      __m512 v = rows[c];
      if (d.fused) {
        if (d.epilogue.residual != nullptr)
          v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(pixels, d.epilogue.residual + offset));
        v = activate_avx512(d.epilogue.post_activation, v);
      }
      _mm512_mask_storeu_ps(d.y + offset, pixels, v);
      if (!d.fused) {
        float* out = d.y + offset;
        for (int r = 0; r < R; ++r) {
          float value = activation_value(d.epilogue.activation, out[r]);
          if (d.epilogue.residual != nullptr) value += d.epilogue.residual[offset + r];
          out[r] = activation_value(d.epilogue.post_activation, value);
        }
      }
    }
  }
}

using TileFn = void (*)(const Direct&, int64_t, int64_t, int64_t, int64_t);

template <int S, int... R>
TileFn one_row_tile(int64_t pixels, std::integer_sequence<int, R...>) {
  static constexpr TileFn kByPixels[] = {tile<R + 1, S>...};
  return kByPixels[pixels - 1];
}

template <int S, int... R>
TileFn two_row_tile(int64_t pixels, std::integer_sequence<int, R...>) {
  static constexpr TileFn kByPixels[] = {tile<2 * (R + 1), S, true>...};
  return kByPixels[pixels / 2 - 1];
}

TileFn tile_for(int64_t stride, int64_t pixels, bool two_rows) {
  constexpr auto one = std::make_integer_sequence<int, kMaxPixels>{};
  constexpr auto two = std::make_integer_sequence<int, kMaxPixels / 2>{};
  if (two_rows) {
    return stride == 1 ? two_row_tile<1>(pixels, two) : stride == 2 ? two_row_tile<2>(pixels, two)
                                                                    : two_row_tile<0>(pixels, two);
  }
  return stride == 1 ? one_row_tile<1>(pixels, one) : stride == 2 ? one_row_tile<2>(pixels, one)
                                                                  : one_row_tile<0>(pixels, one);
}

// Output rows [r0, r1) of the batch (row = n * out_h + oh) for channel blocks [b0, b1); each row in
// ceil(out_w / 12) tiles of nearly equal width.
// Rows at most half a tile wide go two at a time (a pair within one image).
void rows_of_blocks(const Direct& d, int64_t b0, int64_t b1, int64_t r0, int64_t r1) {
  const Conv2dGeometry& g = *d.g;
  const int64_t tiles = (g.out_w + kMaxPixels - 1) / kMaxPixels;
  const bool pairs = 2 * g.out_w <= kMaxPixels;
  const TileFn pair_tile = pairs ? tile_for(g.stride_w, 2 * g.out_w, true) : nullptr;
  for (int64_t b = b0; b < b1; ++b) {
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t n = row / g.out_h, oh = row % g.out_h;
      if (pairs && row + 1 < r1 && oh + 1 < g.out_h) {
        pair_tile(d, b, n, oh, 0);
        ++row;
        continue;
      }
      for (int64_t t = 0; t < tiles; ++t) {
        const int64_t ow0 = g.out_w * t / tiles, pixels = g.out_w * (t + 1) / tiles - ow0;
        tile_for(g.stride_w, pixels, false)(d, b, n, oh, ow0);
      }
    }
  }
}

// The input with its zero border, image plane by plane over the threads.
void pad_input(const Conv2dGeometry& g, const float* x, float* dst, runtime::ThreadPool& pool) {
  const int64_t h = source_h(g), w = source_w(g), planes = g.batch * g.in_channels;
  pool.parallel_for(planes, std::max<int64_t>(1, 4096 / (h * w)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* out = dst + p * h * w;
      const float* in = x + p * g.in_h * g.in_w;
      std::memset(out, 0, sizeof(float) * static_cast<size_t>(g.pad_h * w));
      for (int64_t i = 0; i < g.in_h; ++i) {
        float* row = out + (g.pad_h + i) * w;
        std::memset(row, 0, sizeof(float) * static_cast<size_t>(g.pad_w));
        std::memcpy(row + g.pad_w, in + i * g.in_w, sizeof(float) * static_cast<size_t>(g.in_w));
        std::memset(row + g.pad_w + g.in_w, 0, sizeof(float) * static_cast<size_t>(w - g.pad_w - g.in_w));
      }
      std::memset(out + (g.pad_h + g.in_h) * w, 0, sizeof(float) * static_cast<size_t>((h - g.pad_h - g.in_h) * w));
    }
  });
}

}  // namespace

void direct_tiles_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                          const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                          runtime::ThreadPool& pool) {
  const bool given = packed_weights != nullptr && direct_tiles_packed_for(g, packed_weights);
  // A workspace the caller sized for packed weights has no room to pack them now.
  Workspace ws(packed_weights == nullptr || given ? workspace : nullptr, direct_tiles_workspace_bytes(g, given));
  float* next = ws.floats();
  const float* packed = packed_weights;
  if (!given) {
    direct_tiles_pack_weights(g, w, next, pool);
    packed = next;
    next += padded_floats(direct_tiles_packed_floats(g));
  }
  const float* source = x;
  if (pads(g)) {
    pad_input(g, x, next, pool);
    source = next;
  }
  const Direct d{&g,
                 source,
                 pads(g) ? source_h(g) * source_w(g) : g.in_h * g.in_w,
                 pads(g) ? source_w(g) : g.in_w,
                 packed + kHeaderFloats,
                 bias,
                 y,
                 epilogue,
                 activation_in_registers(epilogue.activation) && activation_in_registers(epilogue.post_activation)};
  // Tasks: tm groups of channel blocks x tn ranges of rows. A row range streams all weights of its
  // blocks, a block group reads all of the input: minimise tn * weight bytes + tm * input bytes.
  const int64_t blocks = channel_blocks(g), rows = g.batch * g.out_h;
  const double flops = 2.0 * static_cast<double>(g.out_channels * rows * g.out_w * col_rows(g));
  const int64_t target = pool.size() == 1 || flops < 1.0e6 ? 1 : 4 * pool.size();
  const double weight_bytes = 4.0 * static_cast<double>(blocks * kChannels * col_rows(g));
  const double input_bytes = 4.0 * static_cast<double>(g.batch * g.in_channels * g.in_h * g.in_w);
  int64_t tm = 1, tn = 1;
  double best = -1.0;
  for (int64_t n_parts = 1; n_parts <= std::min(target, rows); ++n_parts) {
    const int64_t m_parts = std::min(blocks, (target + n_parts - 1) / n_parts);
    const double cost = static_cast<double>(n_parts) * weight_bytes + static_cast<double>(m_parts) * input_bytes;
    if (best < 0 || cost < best) {
      best = cost;
      tm = m_parts;
      tn = n_parts;
    }
  }
  pool.parallel_tasks(tm * tn, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ti = t / tn, tj = t % tn;
      rows_of_blocks(d, blocks * ti / tm, blocks * (ti + 1) / tm, rows * tj / tn, rows * (tj + 1) / tn);
    }
  });
}

#else

void direct_tiles_forward(const Conv2dGeometry&, const float*, const float*, const float*, const float*, float*,
                          void*, const ConvEpilogue&, runtime::ThreadPool&) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::conv_detail
