// The transforms of Winograd F(4x4, 3x3) on AVX-512 (the products and the driver are
// conv_winograd_avx512.cpp's): 36 positions per 4x4 tile of outputs, against F(2x2, 3x3)'s 16 per 2x2,
// so 2.25 multiplies per output instead of 4. Vectorised over 16 tiles of a tile row as F(2x2)'s: the
// six input rows a tile row reads are split four ways by column (x[4 t + j]), and each output row's
// four columns interleaved back. Interpolation points 0, +-1, +-2 and infinity (Lavin and Gray's).
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/activation_avx512.h"
#include "tessera/kernels/cpu/conv_winograd_tiles.h"

namespace tessera::kernels::conv_detail::winograd {

namespace {

// B^T d for six values d (one column of the patch, or one row):
// B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1].
__attribute__((target("avx512f"), always_inline)) inline void input_six(const __m512 d[6], __m512 v[6]) {
  const __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(5.0f), two = _mm512_set1_ps(2.0f);
  const __m512 t1 = _mm512_fnmadd_ps(four, d[2], d[4]);  // d4 - 4 d2
  const __m512 t2 = _mm512_fnmadd_ps(four, d[1], d[3]);  // d3 - 4 d1
  const __m512 t3 = _mm512_sub_ps(d[4], d[2]);
  const __m512 t4 = _mm512_mul_ps(two, _mm512_sub_ps(d[3], d[1]));
  v[0] = _mm512_fmadd_ps(four, d[0], _mm512_fnmadd_ps(five, d[2], d[4]));
  v[1] = _mm512_add_ps(t1, t2);
  v[2] = _mm512_sub_ps(t1, t2);
  v[3] = _mm512_add_ps(t3, t4);
  v[4] = _mm512_sub_ps(t3, t4);
  v[5] = _mm512_fmadd_ps(four, d[1], _mm512_fnmadd_ps(five, d[3], d[5]));
}

// A^T m for six values m: A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
__attribute__((target("avx512f"), always_inline)) inline void output_six(const __m512 m[6], __m512 y[4]) {
  const __m512 s12 = _mm512_add_ps(m[1], m[2]), d12 = _mm512_sub_ps(m[1], m[2]);
  const __m512 s34 = _mm512_add_ps(m[3], m[4]), d34 = _mm512_sub_ps(m[3], m[4]);
  y[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);
  y[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), d34, d12);
  y[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), s34, s12);
  y[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), d34, d12), m[5]);
}

// Pairs of floats (64-bit lanes) from a01 and a23 as `idx` picks them.
__attribute__((target("avx512f"), always_inline)) inline __m512 quad(__m512 a01, __m512i idx, __m512 a23) {
  return _mm512_castpd_ps(_mm512_permutex2var_pd(_mm512_castps_pd(a01), idx, _mm512_castps_pd(a23)));
}

}  // namespace

__attribute__((target("avx512f"))) void input_f4(const Plan& p, const Chunk& c, int64_t ci0, int64_t ci1, float* v) {
  const Conv2dGeometry& g = *p.g;
  // Lanes 0-7 of column j of 8 tiles from a pair of vectors (32 inputs); the other lanes unused.
  const __m512i quarter[4] = {
      _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28),
      _mm512_setr_epi32(1, 5, 9, 13, 17, 21, 25, 29, 1, 5, 9, 13, 17, 21, 25, 29),
      _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30),
      _mm512_setr_epi32(3, 7, 11, 15, 19, 23, 27, 31, 3, 7, 11, 15, 19, 23, 27, 31)};
  const __m512i next = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  const __m512i next_odd = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17);
  const int64_t plane = g.in_h * g.in_w, line = c.pitch;
  const __mmask16 tail = c.tiles % 16 == 0 ? 0 : lanes(c.tiles % 16, 16);
  for (int64_t ci = ci0; ci < ci1; ++ci) {
    if (ci + 2 < ci1) prefetch_plane_rows(p, c, ci + 2, 4);
    for (int64_t r = c.r0; r < c.r1; ++r) {
      const int64_t n = r / p.tiles_h, th = r % p.tiles_h;
      const float* x = p.x + (n * g.in_channels + ci) * plane;
      for (int64_t s = 0; s < p.segments; ++s) {
        const int64_t iw0 = 64 * s - g.pad_w;  // the input column of lane 0's first tap
        __m512 h[6][6];                         // B^T along each input row
#pragma GCC unroll 6
        for (int i = 0; i < 6; ++i) {
          const int64_t ih = 4 * th - g.pad_h + i;
          if (ih < 0 || ih >= g.in_h) {
#pragma GCC unroll 6
            for (int j = 0; j < 6; ++j) h[i][j] = _mm512_setzero_ps();
            continue;
          }
          const float* row = x + ih * g.in_w + iw0;
          __m512 in[5];
#pragma GCC unroll 5
          for (int k = 0; k < 5; ++k)
            in[k] = _mm512_maskz_loadu_ps(lanes(-iw0 - 16 * k, g.in_w - iw0 - 16 * k), row + 16 * k);
          // d_j[t] = x[4 t + j]: tiles 0-7 from the first 32 inputs, 8-15 from the next 32; columns 4
          // and 5 are columns 0 and 1 one tile on.
          __m512 d[6];
#pragma GCC unroll 4
          for (int j = 0; j < 4; ++j) {
            const __m512 lo = _mm512_permutex2var_ps(in[0], quarter[j], in[1]);
            const __m512 hi = _mm512_permutex2var_ps(in[2], quarter[j], in[3]);
            d[j] = _mm512_maskz_shuffle_f32x4(0xFFFF, lo, hi, 0x44);  // maskz: GCC 12's -Wmaybe-uninitialized
          }
          d[4] = _mm512_permutex2var_ps(d[0], next, in[4]);
          d[5] = _mm512_permutex2var_ps(d[1], next_odd, in[4]);
          input_six(d, h[i]);
        }
        float* out = v + ci * c.stride + (r - c.r0) * p.tiles_w + 16 * s;
#pragma GCC unroll 6
        for (int j = 0; j < 6; ++j) {
          const __m512 column[6] = {h[0][j], h[1][j], h[2][j], h[3][j], h[4][j], h[5][j]};
          __m512 t[6];
          input_six(column, t);
#pragma GCC unroll 6
          for (int i = 0; i < 6; ++i) _mm512_storeu_ps(out + (6 * i + j) * line, t[i]);
        }
      }
    }
    // The columns multiplied past the last tile: zero, so that they hold no stale values.
    if (tail != 0) {
      for (int pos = 0; pos < 36; ++pos)
        _mm512_mask_storeu_ps(v + pos * line + ci * c.stride + c.columns - 16, tail, _mm512_setzero_ps());
    }
  }
}

__attribute__((target("avx512f"))) void output_f4(const Plan& p, const Chunk& c, const float* m, int64_t rows,
                                                  int64_t co0, int64_t count) {
  const Conv2dGeometry& g = *p.g;
  const __m512i lo_lanes = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi_lanes = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512i pairs_lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
  const __m512i pairs_hi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  const Activation first = p.fused ? p.epilogue.activation : Activation::none;
  const int64_t plane = g.out_h * g.out_w, position = product_pitch(c, rows);
  for (int64_t k = 0; k < count; ++k) {
    const int64_t co = co0 + k;
    const __m512 bias = _mm512_set1_ps(p.bias != nullptr ? p.bias[co] : 0.0f);
    const float* mk = m + k * c.columns;
    for (int64_t r = c.r0; r < c.r1; ++r) {
      const int64_t n = r / p.tiles_h, th = r % p.tiles_h;
      for (int64_t s = 0; s < p.segments; ++s) {
        const float* mt = mk + (r - c.r0) * p.tiles_w + 16 * s;
        __m512 q[6][4];  // M A: per row of the 6x6 position grid, the tile's four output columns
#pragma GCC unroll 6
        for (int i = 0; i < 6; ++i) {
          __m512 row[6];
#pragma GCC unroll 6
          for (int j = 0; j < 6; ++j) row[j] = _mm512_loadu_ps(mt + (6 * i + j) * position);
          output_six(row, q[i]);
        }
        __m512 ys[4][4];  // A^T (M A): [output column][output row] of each tile
#pragma GCC unroll 4
        for (int b = 0; b < 4; ++b) {
          const __m512 col6[6] = {q[0][b], q[1][b], q[2][b], q[3][b], q[4][b], q[5][b]};
          output_six(col6, ys[b]);
        }
        const int64_t ow0 = 64 * s;
#pragma GCC unroll 4
        for (int a = 0; a < 4; ++a) {
          const int64_t oh = 4 * th + a;
          if (oh >= g.out_h) break;
          const __m512 y[4] = {ys[0][a], ys[1][a], ys[2][a], ys[3][a]};  // this output row's four columns
          // out[4 t + b] = y[b][t]: pairs of columns, then pairs of pairs.
          const __m512 p01_lo = _mm512_permutex2var_ps(y[0], lo_lanes, y[1]);
          const __m512 p01_hi = _mm512_permutex2var_ps(y[0], hi_lanes, y[1]);
          const __m512 p23_lo = _mm512_permutex2var_ps(y[2], lo_lanes, y[3]);
          const __m512 p23_hi = _mm512_permutex2var_ps(y[2], hi_lanes, y[3]);
          const __m512 quarters[4] = {quad(p01_lo, pairs_lo, p23_lo), quad(p01_lo, pairs_hi, p23_lo),
                                      quad(p01_hi, pairs_lo, p23_hi), quad(p01_hi, pairs_hi, p23_hi)};
          const int64_t offset = (n * g.out_channels + co) * plane + oh * g.out_w + ow0;
#pragma GCC unroll 4
          for (int h = 0; h < 4; ++h) {
            const __mmask16 mask = lanes(0, g.out_w - ow0 - 16 * h);
            if (mask == 0) break;
            __m512 out = activate_avx512(first, _mm512_add_ps(quarters[h], bias));
            if (p.fused) {
              if (p.epilogue.residual != nullptr)
                out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(mask, p.epilogue.residual + offset + 16 * h));
              out = activate_avx512(p.epilogue.post_activation, out);
            }
            _mm512_mask_storeu_ps(p.y + offset + 16 * h, mask, out);
          }
          if (!p.fused) {
            const int64_t end = std::min<int64_t>(64, g.out_w - ow0);
            for (int64_t i = 0; i < end; ++i) {
              float value = activation_value(p.epilogue.activation, p.y[offset + i]);
              if (p.epilogue.residual != nullptr) value += p.epilogue.residual[offset + i];
              p.y[offset + i] = activation_value(p.epilogue.post_activation, value);
            }
          }
        }
      }
    }
  }
}

}  // namespace tessera::kernels::conv_detail::winograd

#endif  // TESSERA_X86_KERNELS
