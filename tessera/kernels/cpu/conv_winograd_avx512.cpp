// Winograd forward on AVX-512 (see conv_winograd.h): F(2x2, 3x3)'s transforms, and the products and
// the driver both tile sizes share (F(4x4, 3x3)'s transforms: conv_winograd_f4_avx512.cpp). A task
// takes a chunk of tile rows (whole rows of output tiles, across images) and a range of output-channel
// blocks:
//   1. input transform: per input channel and tile row, 16 tiles at a time, the input rows a tile row
//      reads are split by column (B^T d B along the row, then down the rows), giving
//      V[position][channel][tile] for the chunk (thread scratch, sized to stay in L2);
//   2. products: per block of output channels and per position, M = U[position] V[position] in
//      register tiles of 8 (or 16, 24) channels x 48 (or fewer) tiles, broadcasting the weights;
//   3. output transform: A^T M A per tile, interleaved back into the output rows, with the bias,
//      activation, residual and activation applied before the (masked) store.
#include "tessera/kernels/cpu/x86_kernels.h"

#include "tessera/kernels/cpu/conv_winograd.h"

#include <algorithm>

#include "tessera/kernels/cpu/activation.h"
#include "tessera/runtime/thread_scratch.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/kernels/cpu/activation_avx512.h"
#include "tessera/kernels/cpu/conv_winograd_tiles.h"
#endif

namespace tessera::kernels::conv_detail {

#if TESSERA_X86_KERNELS

namespace winograd {

// F(2x2, 3x3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] along the row, then down the rows.
__attribute__((target("avx512f"))) void input_f2(const Plan& p, const Chunk& c, int64_t ci0, int64_t ci1, float* v) {
  const Conv2dGeometry& g = *p.g;
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i next = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  const __m512i next_odd = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17);
  const int64_t plane = g.in_h * g.in_w, line = c.pitch;
  const __mmask16 tail = c.tiles % 16 == 0 ? 0 : lanes(c.tiles % 16, 16);
  for (int64_t ci = ci0; ci < ci1; ++ci) {
    if (ci + 2 < ci1) prefetch_plane_rows(p, c, ci + 2, 2);
    for (int64_t r = c.r0; r < c.r1; ++r) {
      const int64_t n = r / p.tiles_h, th = r % p.tiles_h;
      const float* x = p.x + (n * g.in_channels + ci) * plane;
      for (int64_t s = 0; s < p.segments; ++s) {
        const int64_t iw0 = 32 * s - g.pad_w;  // the input column of lane 0's first tap
        __m512 h[4][4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          const int64_t ih = 2 * th - g.pad_h + i;
          if (ih < 0 || ih >= g.in_h) {
            h[i][0] = h[i][1] = h[i][2] = h[i][3] = _mm512_setzero_ps();
            continue;
          }
          const float* row = x + ih * g.in_w + iw0;
          const __m512 a = _mm512_maskz_loadu_ps(lanes(-iw0, g.in_w - iw0), row);
          const __m512 b = _mm512_maskz_loadu_ps(lanes(-iw0 - 16, g.in_w - iw0 - 16), row + 16);
          const __m512 e = _mm512_maskz_loadu_ps(lanes(-iw0 - 32, g.in_w - iw0 - 32), row + 32);
          // d_j[t] = x[2 t + j]: the even and odd columns, and each shifted on by one.
          const __m512 d0 = _mm512_permutex2var_ps(a, even, b), d1 = _mm512_permutex2var_ps(a, odd, b);
          const __m512 d2 = _mm512_permutex2var_ps(d0, next, e), d3 = _mm512_permutex2var_ps(d1, next_odd, e);
          h[i][0] = _mm512_sub_ps(d0, d2);
          h[i][1] = _mm512_add_ps(d1, d2);
          h[i][2] = _mm512_sub_ps(d2, d1);
          h[i][3] = _mm512_sub_ps(d1, d3);
        }
        float* out = v + ci * c.stride + (r - c.r0) * p.tiles_w + 16 * s;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          _mm512_storeu_ps(out + j * line, _mm512_sub_ps(h[0][j], h[2][j]));
          _mm512_storeu_ps(out + (4 + j) * line, _mm512_add_ps(h[1][j], h[2][j]));
          _mm512_storeu_ps(out + (8 + j) * line, _mm512_sub_ps(h[2][j], h[1][j]));
          _mm512_storeu_ps(out + (12 + j) * line, _mm512_sub_ps(h[1][j], h[3][j]));
        }
      }
    }
    // The columns multiplied past the last tile: zero, so that they hold no stale values.
    if (tail != 0) {
      for (int pos = 0; pos < 16; ++pos)
        _mm512_mask_storeu_ps(v + pos * line + ci * c.stride + c.columns - 16, tail, _mm512_setzero_ps());
    }
  }
}

}  // namespace winograd

namespace {

using namespace winograd;

// How far ahead of the products the transformed weights are fetched: 64 input channels (2 KiB per
// block). At batch 1 each weight feeds few tiles, so the products stream the weights from memory
// (ResNet-18 transforms 28 MiB of them for its 14x14 layers alone, more than the L3 holds), a few
// blocks at a time, and each block's run crosses a page every 4 KiB, where the hardware's prefetch
// starts over.
constexpr int64_t kWeightsAhead = 64 * kWinogradRows;

// m[row][col] = sum_ci u[block][ci][row] * v[ci][col] for NB weight blocks (8 rows each) x NV vectors
// of 16 columns; u's blocks are `block_stride` apart, v's lines `stride`, m's rows `m_stride`.
template <int NB, int NV>
__attribute__((target("avx512f"))) void product(const float* u, int64_t block_stride, const float* v, int64_t stride,
                                                int64_t channels, float* m, int64_t m_stride) {
  __m512 acc[NB][kWinogradRows][NV];
#pragma GCC unroll 24
  for (int b = 0; b < NB; ++b)
    for (int r = 0; r < kWinogradRows; ++r)
      for (int j = 0; j < NV; ++j) acc[b][r][j] = _mm512_setzero_ps();
  // One pointer per block, each stepping on by a block row: indexed as u[b * block_stride + r], GCC
  // keeps a register per (block, row) offset, spills them to vector registers and reloads one per FMA.
  const float* ub[NB];
#pragma GCC unroll 3
  for (int b = 0; b < NB; ++b) ub[b] = u + b * block_stride;
  for (int64_t ci = 0; ci < channels; ++ci, v += stride) {
    __m512 col[NV];
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) col[j] = _mm512_loadu_ps(v + 16 * j);
#pragma GCC unroll 3
    for (int b = 0; b < NB; ++b) {
      _mm_prefetch(reinterpret_cast<const char*>(ub[b] + kWeightsAhead), _MM_HINT_T0);
#pragma GCC unroll 8
      for (int r = 0; r < kWinogradRows; ++r) {
        const __m512 a = _mm512_set1_ps(ub[b][r]);
#pragma GCC unroll 3
        for (int j = 0; j < NV; ++j) acc[b][r][j] = _mm512_fmadd_ps(a, col[j], acc[b][r][j]);
      }
      ub[b] += kWinogradRows;
    }
  }
#pragma GCC unroll 24
  for (int b = 0; b < NB; ++b)
    for (int r = 0; r < kWinogradRows; ++r)
      for (int j = 0; j < NV; ++j) _mm512_storeu_ps(m + (b * kWinogradRows + r) * m_stride + 16 * j, acc[b][r][j]);
}

using ProductFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t);

}  // namespace

namespace winograd {

// F(2x2, 3x3): A^T = [1 1 1 0; 0 1 -1 -1] along the row, then down the rows.
__attribute__((target("avx512f"))) void output_f2(const Plan& p, const Chunk& c, const float* m, int64_t rows,
                                                  int64_t co0, int64_t count) {
  const Conv2dGeometry& g = *p.g;
  const __m512i lo_lanes = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi_lanes = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
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
        __m512 q[4][2];  // M A: per row of the 4x4 position grid, the tile's two output columns
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          const __m512 m0 = _mm512_loadu_ps(mt + (4 * i) * position), m1 = _mm512_loadu_ps(mt + (4 * i + 1) * position);
          const __m512 m2 = _mm512_loadu_ps(mt + (4 * i + 2) * position);
          const __m512 m3 = _mm512_loadu_ps(mt + (4 * i + 3) * position);
          q[i][0] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
          q[i][1] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
        }
        const int64_t ow0 = 32 * s;
        const __mmask16 lo_mask = lanes(0, g.out_w - ow0), hi_mask = lanes(0, g.out_w - ow0 - 16);
#pragma GCC unroll 2
        for (int a = 0; a < 2; ++a) {
          const int64_t oh = 2 * th + a;
          if (oh >= g.out_h) break;
          __m512 y0, y1;  // A^T (M A): this output row's two columns of each tile
          if (a == 0) {
            y0 = _mm512_add_ps(_mm512_add_ps(q[0][0], q[1][0]), q[2][0]);
            y1 = _mm512_add_ps(_mm512_add_ps(q[0][1], q[1][1]), q[2][1]);
          } else {
            y0 = _mm512_sub_ps(_mm512_sub_ps(q[1][0], q[2][0]), q[3][0]);
            y1 = _mm512_sub_ps(_mm512_sub_ps(q[1][1], q[2][1]), q[3][1]);
          }
          const int64_t offset = (n * g.out_channels + co) * plane + oh * g.out_w + ow0;
          const __m512 halves[2] = {_mm512_permutex2var_ps(y0, lo_lanes, y1), _mm512_permutex2var_ps(y0, hi_lanes, y1)};
          const __mmask16 masks[2] = {lo_mask, hi_mask};
#pragma GCC unroll 2
          for (int h = 0; h < 2; ++h) {
            if (masks[h] == 0) break;
            __m512 out = activate_avx512(first, _mm512_add_ps(halves[h], bias));
            if (p.fused) {
              if (p.epilogue.residual != nullptr)
                out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(masks[h], p.epilogue.residual + offset + 16 * h));
              out = activate_avx512(p.epilogue.post_activation, out);
            }
            _mm512_mask_storeu_ps(p.y + offset + 16 * h, masks[h], out);
          }
          if (!p.fused) {
            const int64_t end = std::min<int64_t>(32, g.out_w - ow0);
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

}  // namespace winograd

namespace {

using namespace winograd;

void transform_input(const Plan& p, const Chunk& c, int64_t ci0, int64_t ci1, float* v) {
  if (p.chunks.tile == 4) {
    input_f4(p, c, ci0, ci1, v);
  } else {
    input_f2(p, c, ci0, ci1, v);
  }
}

// Weight blocks per run (products_and_output): as many as keep the run's products, all positions of
// it, within about 384 KiB of L2, a multiple of `group`.
int64_t run_blocks(const Plan& p, const Chunk& c, int64_t group) {
  const int64_t row_floats = p.chunks.positions * c.columns;
  return std::max<int64_t>(group, 98304 / std::max<int64_t>(1, row_floats * kWinogradRows) / group * group);
}

// Output-channel blocks [b0, b1) of chunk c from its transformed input v, a run of blocks at a time:
// per position, every block of the run multiplies that position's V while it is in L1/L2, so V (one
// chunk's, up to 2 MiB) is read once per run rather than once per block (at batch 1 on 28x28 planes
// re-reading it from L3 per block of 8 channels was half of the products' time); the run's products
// then take the output transform.
void products_and_output(const Plan& p, const Chunk& c, const float* v, int64_t b0, int64_t b1) {
  const Conv2dGeometry& g = *p.g;
  const int64_t cin = g.in_channels, block_floats = cin * kWinogradRows;
  const int64_t vectors = c.columns / 16;
  // One column vector: up to three weight blocks a product (24 accumulators); more: one block.
  const int64_t group = vectors == 1 ? 3 : 1;
  const int64_t run = run_blocks(p, c, group);
  // Slack past the end: the output transform reads whole vectors from the last line.
  float* m = runtime::thread_scratch_of<float>(
      runtime::ScratchSlot::winograd_products,
      static_cast<size_t>(p.chunks.positions * product_pitch(c, run * kWinogradRows) + 2 * c.stride));
  for (int64_t b = b0; b < b1; b += run) {
    const int64_t blocks = std::min(run, b1 - b), rows = blocks * kWinogradRows;
    for (int64_t pos = 0; pos < p.chunks.positions; ++pos) {
      const float* vp = v + pos * c.pitch;
      float* mp = m + pos * product_pitch(c, rows);
      for (int64_t k = 0; k < blocks; k += group) {
        const int64_t nb = std::min(group, blocks - k);
        const float* u = p.u + (pos * p.blocks + b + k) * block_floats;
        float* mk = mp + k * kWinogradRows * c.columns;
        if (vectors == 1) {
          const ProductFn fn = nb == 1 ? product<1, 1> : nb == 2 ? product<2, 1> : product<3, 1>;
          fn(u, block_floats, vp, c.stride, cin, mk, c.columns);
          continue;
        }
        for (int64_t j = 0; j < vectors;) {
          // Pieces of three vectors; four left go as two and two.
          const int64_t left = vectors - j, nv = left == 4 ? 2 : std::min<int64_t>(3, left);
          const ProductFn fn = nv == 1 ? product<1, 1> : nv == 2 ? product<1, 2> : product<1, 3>;
          fn(u, block_floats, vp + 16 * j, c.stride, cin, mk + 16 * j, c.columns);
          j += nv;
        }
      }
    }
    const int64_t co0 = b * kWinogradRows;
    const int64_t count = std::min(rows, g.out_channels - co0);
    if (p.chunks.tile == 4) {
      output_f4(p, c, m, rows, co0, count);
    } else {
      output_f2(p, c, m, rows, co0, count);
    }
  }
}

}  // namespace

void winograd_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                      const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                      runtime::ThreadPool& pool, int requested_tile) {
  using namespace winograd;
  const int given_tile = packed_weights != nullptr ? winograd_packed_tile(g, packed_weights) : 0;
  const bool given = given_tile != 0;
  const int tile = given ? given_tile : requested_tile != 0 ? requested_tile : winograd_tile(g);
  // A workspace the caller sized for packed weights has no room to transform them now.
  Workspace ws(packed_weights == nullptr || given ? workspace : nullptr, winograd_workspace_bytes(g, given));
  const float* packed = packed_weights;
  if (!given) {
    winograd_pack_weights(g, w, ws.floats(), pool, tile);
    packed = ws.floats();
  }
  const float* u = packed + kWinogradHeaderFloats;
  float* shared = ws.floats() + (given ? 0 : padded_floats(winograd_packed_floats(g)));
  Plan p{};
  p.g = &g;
  p.x = x;
  p.u = u;
  p.bias = bias;
  p.y = y;
  p.epilogue = epilogue;
  p.fused = activation_in_registers(epilogue.activation) && activation_in_registers(epilogue.post_activation);
  p.chunks = winograd_chunks(g, tile);
  p.tiles_h = p.chunks.tiles_h;
  p.tiles_w = p.chunks.tiles_w;
  p.segments = p.chunks.segments;
  p.blocks = (g.out_channels + kWinogradRows - 1) / kWinogradRows;
  const int64_t threads = pool.size();
  bool shared_chunks = threads > 1 && p.chunks.count < 4 * threads && p.chunks.count <= kWinogradSharedChunks;
  if (shared_chunks) {
    // Few chunks (one image of a small plane). Where its tile rows split into a chunk per thread with no
    // more columns to multiply (49 tiles of 28x28 by F(4x4) or 14x14 by F(2x2): 64 columns either way),
    // each thread transforms its own chunk and multiplies it by all the weights: a shared chunk is
    // written by both threads and then read whole by each, from the other's cache (batch 1, 128 channels
    // on 28x28, warm caches: 0.31 ms against 0.51).
    const WinogradChunks split = winograd_chunks(g, tile, (p.chunks.tile_rows + threads - 1) / threads);
    if (split.count >= threads && winograd_columns(split) <= winograd_columns(p.chunks)) {
      p.chunks = split;
      shared_chunks = false;
    }
  }
  const int64_t chunks = p.chunks.count;
  if (shared_chunks) {
    // Too few chunks to go round (one image, small planes): transform them once, their channels split
    // over the threads, then split the output channels too.
    const int64_t in_parts = std::max<int64_t>(1, std::min<int64_t>(g.in_channels / 16, (2 * threads + chunks - 1) / chunks));
    pool.parallel_tasks(chunks * in_parts, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t index = t / in_parts, part = t % in_parts;
        transform_input(p, chunk_of(p, index), g.in_channels * part / in_parts, g.in_channels * (part + 1) / in_parts,
                        shared + index * padded_floats(p.chunks.floats()));
      }
    });
    const int64_t parts = std::clamp<int64_t>((4 * threads + chunks - 1) / chunks, 1, std::max<int64_t>(1, p.blocks / 3));
    pool.parallel_tasks(chunks * parts, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t index = t / parts, part = t % parts;
        products_and_output(p, chunk_of(p, index), shared + index * padded_floats(p.chunks.floats()),
                            p.blocks * part / parts, p.blocks * (part + 1) / parts);
      }
    });
    return;
  }
  // Each task transforms its chunk into its thread's scratch (sized to stay in L2), then multiplies.
  pool.parallel_tasks(chunks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const Chunk c = chunk_of(p, t);
      float* v = runtime::thread_scratch_of<float>(runtime::ScratchSlot::winograd_inputs,
                                                   static_cast<size_t>(p.chunks.floats()));
      transform_input(p, c, 0, g.in_channels, v);
      products_and_output(p, c, v, 0, p.blocks);
    }
  });
}

#else

void winograd_forward(const Conv2dGeometry&, const float*, const float*, const float*, const float*, float*, void*,
                      const ConvEpilogue&, runtime::ThreadPool&, int) {}

#endif  // TESSERA_X86_KERNELS

}  // namespace tessera::kernels::conv_detail
