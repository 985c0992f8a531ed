// One depthwise output plane with AVX-512: 16 outputs of a row per vector, each tap one masked load
// (zeros where it falls in the padding; stride 2 loads 32 inputs and keeps the even lanes) and one
// FMA, the masks worked out once per plane; the tail is applied before the one store.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/conv_depthwise.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/kernels/cpu/activation_avx512.h"

#include <algorithm>
#include <cstdint>

#include "tessera/kernels/cpu/activation.h"
#endif

namespace tessera::kernels::conv_detail {

bool can_run_depthwise_avx512(const Conv2dGeometry& g) {
  return TESSERA_X86_KERNELS && (g.stride_w == 1 || g.stride_w == 2) && g.kernel_w <= kMaxDepthwiseKernelW &&
         g.out_w <= kMaxDepthwiseOutW;
}

#if TESSERA_X86_KERNELS

namespace {

inline uint64_t bits(int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  const uint64_t upto_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upto_hi & ~((uint64_t{1} << lo) - 1);
}

// Rows of a plane with the tap columns and stride fixed at compile time (MobileNet's 3x3, stride 1 and
// 2; 0 = read from g), four output rows at once: four independent FMA chains, where one row alone
// would wait out each FMA's latency. A row whose tap falls in the padding loads with an empty mask.
// One block of kRows output rows from oh0 (all of them inside the plane).
template <int KW, int S, int kRows>
__attribute__((target("avx512f"))) void plane_rows(const Conv2dGeometry& g, const DepthwiseMasks& masks,
                                                   const float* x, const float* w, float bias,
                                                   const DepthwiseTail& tail, bool fused, float* y, int64_t oh0) {
  const int64_t sw = S != 0 ? S : g.stride_w, kw_n = KW != 0 ? KW : g.kernel_w, chunks = (g.out_w + 15) / 16;
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const uint64_t(*load_mask)[kMaxDepthwiseKernelW] = masks.load;
  const uint32_t* store_mask = masks.store;
  constexpr int64_t rows = kRows;
  {
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t ow0 = c * 16;
      __m512 acc[kRows];
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) acc[r] = _mm512_set1_ps(bias);
      for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
        const float* row[kRows];
        uint64_t row_mask[kRows];
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
          const int64_t ih = (oh0 + r) * g.stride_h - g.pad_h + kh * g.dilation_h;
          const bool valid = r < rows && ih >= 0 && ih < g.in_h;
          row_mask[r] = valid ? ~uint64_t{0} : 0;
          // may point into the padding: masked
          row[r] = x + ((valid ? ih : tail.input_first_row) - tail.input_first_row) * g.in_w + ow0 * sw - g.pad_w;
        }
#pragma GCC unroll 16
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const __m512 wv = _mm512_set1_ps(w[kh * kw_n + kw]);
#pragma GCC unroll 4
          for (int r = 0; r < kRows; ++r) {
            const uint64_t m = load_mask[c][kw] & row_mask[r];
            const float* src = row[r] + kw * g.dilation_w;
            __m512 v;
            if (sw == 1) {
              v = _mm512_maskz_loadu_ps(static_cast<__mmask16>(m), src);
            } else {
              v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(static_cast<__mmask16>(m), src), evens,
                                         _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> 16), src + 16));
            }
            acc[r] = _mm512_fmadd_ps(wv, v, acc[r]);
          }
        }
      }
      const auto sm = static_cast<__mmask16>(store_mask[c]);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        if (r >= rows) break;
        const int64_t at = (oh0 + r - tail.first_row) * g.out_w + ow0;
        if (fused) {
          acc[r] = activate_avx512(tail.activation, acc[r]);
          if (tail.residual != nullptr) acc[r] = _mm512_add_ps(acc[r], _mm512_maskz_loadu_ps(sm, tail.residual + at));
          acc[r] = activate_avx512(tail.post_activation, acc[r]);
        }
        _mm512_mask_storeu_ps(y + at, sm, acc[r]);
      }
    }
  }
}

template <int KW, int S>
void plane(const Conv2dGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w, float bias,
           const DepthwiseTail& tail, bool fused, float* y, int64_t oh_begin, int64_t oh_end) {
  int64_t oh0 = oh_begin;
  for (; oh0 + 4 <= oh_end; oh0 += 4) plane_rows<KW, S, 4>(g, masks, x, w, bias, tail, fused, y, oh0);
  switch (oh_end - oh0) {
    case 3:
      return plane_rows<KW, S, 3>(g, masks, x, w, bias, tail, fused, y, oh0);
    case 2:
      return plane_rows<KW, S, 2>(g, masks, x, w, bias, tail, fused, y, oh0);
    case 1:
      return plane_rows<KW, S, 1>(g, masks, x, w, bias, tail, fused, y, oh0);
    default:
      return;
  }
}

// The rows of a 3x3 plane (stride S both ways, no dilation) whose three taps rows all lie inside the
// input, four output rows at a time: each input row the block reads is loaded once per tap column (for
// stride 2: two loads and a permute) and feeds every output row it is a tap row of, from weights held
// in registers. Same products in the same order as `plane`, so the results are the same bits.
template <int S>
__attribute__((target("avx512f"))) void interior_3x3(const Conv2dGeometry& g, const DepthwiseMasks& masks,
                                                     const float* x, const float* w, float bias,
                                                     const DepthwiseTail& tail, bool fused, float* y, int64_t oh_begin,
                                                     int64_t oh_end) {
  constexpr int kRows = 4, kInputRows = (kRows - 1) * S + 3;
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  __m512 wv[9];
  for (int t = 0; t < 9; ++t) wv[t] = _mm512_set1_ps(w[t]);
  const int64_t chunks = (g.out_w + 15) / 16;
  int64_t oh0 = oh_begin;
  for (; oh0 + kRows <= oh_end; oh0 += kRows) {
    const float* block = x + (oh0 * S - g.pad_h - tail.input_first_row) * g.in_w - g.pad_w;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t ow0 = c * 16;
      const float* first = block + ow0 * S;  // may point into the padding: masked
      // Stride 1: per tap column a load of 16 (masked at the padding). Stride 2: the 33 inputs the 16
      // outputs reach, in three loads; the tap columns are their even lanes, odd lanes, and even lanes
      // one further on.
      __mmask16 tap[3], wide[3];
      if constexpr (S == 1) {
        for (int kw = 0; kw < 3; ++kw) tap[kw] = static_cast<__mmask16>(masks.load[c][kw]);
      } else {
        const int64_t start = ow0 * 2 - g.pad_w, len = std::min<int64_t>(16, g.out_w - ow0);
        const uint64_t m = bits(std::max<int64_t>(0, -start), std::min<int64_t>(2 * len + 1, g.in_w - start));
        for (int part = 0; part < 3; ++part) wide[part] = static_cast<__mmask16>(m >> (16 * part));
      }
      // Fetch the rows of the block after next while this one computes: the hardware's streams do not
      // cross 4 KiB pages, which rows of a plane do every few rows.
#pragma GCC unroll 8
      for (int t = 0; t < kRows * S; ++t) {
        const float* ahead = first + (kInputRows + kRows * S + t) * g.in_w;
#pragma GCC unroll 3
        for (int line = 0; line <= S; ++line)
          _mm_prefetch(reinterpret_cast<const char*>(ahead + 16 * line), _MM_HINT_T0);
      }
      __m512 acc[kRows];
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) acc[r] = _mm512_set1_ps(bias);
#pragma GCC unroll 16
      for (int t = 0; t < kInputRows; ++t) {
        const float* row = first + t * g.in_w;
        __m512 v[3];
        if constexpr (S == 1) {
#pragma GCC unroll 3
          for (int kw = 0; kw < 3; ++kw) v[kw] = _mm512_maskz_loadu_ps(tap[kw], row + kw);
        } else {
          const __m512 a = _mm512_maskz_loadu_ps(wide[0], row), b = _mm512_maskz_loadu_ps(wide[1], row + 16);
          const __m512 last = _mm512_maskz_loadu_ps(wide[2], row + 32);
          v[0] = _mm512_permutex2var_ps(a, evens, b);
          v[1] = _mm512_permutex2var_ps(a, odds, b);
          v[2] = _mm512_castsi512_ps(
              _mm512_maskz_alignr_epi32(0xFFFF, _mm512_castps_si512(last), _mm512_castps_si512(v[0]), 1));
        }
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
          const int kh = t - r * S;
          if (kh < 0 || kh > 2) continue;
#pragma GCC unroll 3
          for (int kw = 0; kw < 3; ++kw) acc[r] = _mm512_fmadd_ps(wv[kh * 3 + kw], v[kw], acc[r]);
        }
      }
      const auto sm = static_cast<__mmask16>(masks.store[c]);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const int64_t at = (oh0 + r - tail.first_row) * g.out_w + ow0;
        if (fused) {
          acc[r] = activate_avx512(tail.activation, acc[r]);
          if (tail.residual != nullptr) acc[r] = _mm512_add_ps(acc[r], _mm512_maskz_loadu_ps(sm, tail.residual + at));
          acc[r] = activate_avx512(tail.post_activation, acc[r]);
        }
        float* dst = y + at;
        if (tail.stream && sm == 0xFFFF && (reinterpret_cast<uintptr_t>(dst) & 63) == 0) {
          _mm512_stream_ps(dst, acc[r]);
        } else {
          _mm512_mask_storeu_ps(dst, sm, acc[r]);
        }
      }
    }
  }
  if (oh0 < oh_end) plane<3, S>(g, masks, x, w, bias, tail, fused, y, oh0, oh_end);
}

// Rows [begin, end) of a 3x3 plane, stride 1 or 2 both ways, no dilation: the rows with taps in the
// top or bottom padding through `plane`, the others through interior_3x3.
template <int S>
void plane_3x3(const Conv2dGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w, float bias,
               const DepthwiseTail& tail, bool fused, float* y, int64_t begin, int64_t end) {
  // Output rows oh with 0 <= oh * S - pad_h and oh * S - pad_h + 2 < in_h.
  const int64_t lo = std::min(g.out_h, (g.pad_h + S - 1) / S);
  const int64_t hi = std::clamp<int64_t>(g.in_h - 3 + g.pad_h < 0 ? 0 : (g.in_h - 3 + g.pad_h) / S + 1, lo, g.out_h);
  const auto in = [&](int64_t row) { return std::clamp(row, begin, end); };
  plane<3, S>(g, masks, x, w, bias, tail, fused, y, in(0), in(lo));
  interior_3x3<S>(g, masks, x, w, bias, tail, fused, y, in(lo), in(hi));
  plane<3, S>(g, masks, x, w, bias, tail, fused, y, in(hi), end);
}

}  // namespace

void depthwise_store_fence() {
  _mm_sfence();
}

DepthwiseMasks depthwise_masks(const Conv2dGeometry& g) {
  DepthwiseMasks m;
  const int64_t sw = g.stride_w;
  for (int64_t c = 0; c < (g.out_w + 15) / 16; ++c) {
    const int64_t ow0 = c * 16, len = std::min<int64_t>(16, g.out_w - ow0);
    m.store[c] = static_cast<uint32_t>(bits(0, len));
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      int64_t lo = 0, hi = 0;
      valid_outputs(g.in_w, g.out_w, sw, kw * g.dilation_w - g.pad_w, lo, hi);
      lo = std::clamp(lo - ow0, int64_t{0}, len);
      hi = std::clamp(hi - ow0, lo, len);
      // Lane i reads input lane i * sw; for stride 2 the odd lanes between valid ones are in bounds too.
      m.load[c][kw] = sw == 1 ? bits(lo, hi) : bits(2 * lo, 2 * hi - 1);
    }
  }
  const int64_t plane = g.out_h * g.out_w;
  m.flat_plane = g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
                 g.dilation_w == 1 && g.pad_h == 1 && g.pad_w == 1 && g.in_h == g.out_h && g.in_w == g.out_w &&
                 plane <= DepthwiseMasks::kMaxFlatPlane && g.out_w < 16;
  if (m.flat_plane) {
    for (int64_t v = 0; v < (plane + 15) / 16; ++v) {
      for (int t = 0; t < 9; ++t) {
        uint16_t lanes = 0;
        for (int64_t i = 0; i < 16; ++i) {
          const int64_t p = 16 * v + i, row = p / g.out_w + t / 3 - 1, col = p % g.out_w + t % 3 - 1;
          if (p < plane && row >= 0 && row < g.in_h && col >= 0 && col < g.in_w) lanes |= uint16_t(1u << i);
        }
        m.flat[v][t] = lanes;
      }
    }
  }
  return m;
}

namespace {

// A whole small plane (DepthwiseMasks::flat) in at most four vectors of 16 positions across its rows:
// tap (kh, kw) of position p reads input position p + (kh - 1) W + kw - 1, masked where that leaves
// the plane or wraps into the next row. On 7x7 planes 4 vectors x 9 taps, where row by row it is 7
// vectors of 7 lanes. The vectors' sums advance tap by tap together (V independent chains of FMAs):
// vector after vector, each chain of nine FMAs waited out its latency, 39 ns a 7x7 plane on one
// thread (MobileNetV2's 960-channel layers at batch 16: 0.62 ms). Each sum still takes its taps in
// the same order, so the results are the same bits.
template <int V>
__attribute__((target("avx512f"))) void flat_plane_3x3(const Conv2dGeometry& g, const DepthwiseMasks& masks,
                                                       const float* x, const float* w, float bias,
                                                       const DepthwiseTail& tail, bool fused, float* y) {
  const int64_t plane = g.out_h * g.out_w;
  __m512 acc[V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) acc[v] = _mm512_set1_ps(bias);
#pragma GCC unroll 9
  for (int t = 0; t < 9; ++t) {
    const __m512 wv = _mm512_set1_ps(w[t]);
    // May point before or past the plane: those lanes are masked off.
    const float* src = x + (t / 3 - 1) * g.in_w + (t % 3 - 1);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[v] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(masks.flat[v][t], src + 16 * v), acc[v]);
  }
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const int64_t count = std::min<int64_t>(16, plane - 16 * v);
    const auto sm = static_cast<__mmask16>((1u << count) - 1);
    if (fused) {
      acc[v] = activate_avx512(tail.activation, acc[v]);
      if (tail.residual != nullptr) acc[v] = _mm512_add_ps(acc[v], _mm512_maskz_loadu_ps(sm, tail.residual + 16 * v));
      acc[v] = activate_avx512(tail.post_activation, acc[v]);
    }
    _mm512_mask_storeu_ps(y + 16 * v, sm, acc[v]);
  }
}

void rows_of_plane(const Conv2dGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w, float bias,
                   const DepthwiseTail& tail, bool fused, float* y, int64_t begin, int64_t end) {
  const bool square_3x3 = g.kernel_h == 3 && g.kernel_w == 3 && g.dilation_h == 1 && g.dilation_w == 1 &&
                          g.stride_h == g.stride_w;
  if (square_3x3 && g.stride_w == 1) {
    plane_3x3<1>(g, masks, x, w, bias, tail, fused, y, begin, end);
  } else if (square_3x3 && g.stride_w == 2) {
    plane_3x3<2>(g, masks, x, w, bias, tail, fused, y, begin, end);
  } else if (g.kernel_w == 3 && g.stride_w == 1) {
    plane<3, 1>(g, masks, x, w, bias, tail, fused, y, begin, end);
  } else if (g.kernel_w == 3 && g.stride_w == 2) {
    plane<3, 2>(g, masks, x, w, bias, tail, fused, y, begin, end);
  } else {
    plane<0, 0>(g, masks, x, w, bias, tail, fused, y, begin, end);
  }
}

}  // namespace

void depthwise_plane_avx512(const Conv2dGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w,
                            float bias, const DepthwiseTail& tail, float* y) {
  const bool fused = activation_in_registers(tail.activation) && activation_in_registers(tail.post_activation);
  if (masks.flat_plane) {
    switch ((g.out_h * g.out_w + 15) / 16) {
      case 1:
        flat_plane_3x3<1>(g, masks, x, w, bias, tail, fused, y);
        break;
      case 2:
        flat_plane_3x3<2>(g, masks, x, w, bias, tail, fused, y);
        break;
      case 3:
        flat_plane_3x3<3>(g, masks, x, w, bias, tail, fused, y);
        break;
      default:
        flat_plane_3x3<4>(g, masks, x, w, bias, tail, fused, y);
        break;
    }
  } else {
    rows_of_plane(g, masks, x, w, bias, tail, fused, y, 0, g.out_h);
  }
  if (!fused) finish_depthwise_plane(g, tail, y);
}

void depthwise_rows_avx512(const Conv2dGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w,
                           float bias, const DepthwiseTail& tail, float* y, int64_t end) {
  rows_of_plane(g, masks, x, w, bias, tail, true, y, tail.first_row, end);
}

#else

void depthwise_store_fence() {}
DepthwiseMasks depthwise_masks(const Conv2dGeometry&) {
  return {};
}
void depthwise_plane_avx512(const Conv2dGeometry&, const DepthwiseMasks&, const float*, const float*, float,
                            const DepthwiseTail&, float*) {}
void depthwise_rows_avx512(const Conv2dGeometry&, const DepthwiseMasks&, const float*, const float*, float,
                           const DepthwiseTail&, float*, int64_t) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::conv_detail
