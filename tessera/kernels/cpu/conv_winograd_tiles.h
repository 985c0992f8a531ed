#pragma once
// What the Winograd transforms of each tile size (conv_winograd_avx512.cpp: F(2x2, 3x3) and the
// driver; conv_winograd_f4_avx512.cpp: F(4x4, 3x3)) share: the plan of one call and one chunk of tile
// rows. Internal to tessera/kernels/cpu/conv_winograd*_avx512.cpp (AVX-512 builds only).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "tessera/kernels/cpu/conv_winograd.h"

namespace tessera::kernels::conv_detail::winograd {

// What every task of one call shares.
struct Plan {
  const Conv2dGeometry* g;
  const float* x;
  const float* u;  // the transformed weights, after the header
  const float* bias;
  float* y;
  ConvEpilogue epilogue;
  bool fused;  // both activations run in registers
  WinogradChunks chunks;
  int64_t blocks;  // blocks of kWinogradRows output channels
  int64_t tiles_h, tiles_w, segments;  // (from chunks)
};

// Chunk `index`: tile rows [r0, r1), row k's tiles from k * tiles_w, `columns` of them (a multiple of
// 16) multiplied; lines and positions laid out as a full chunk's (WinogradChunks).
struct Chunk {
  int64_t r0, r1, tiles, columns, stride, pitch;
};

// Floats from one position to the next in M, for `rows` rows of output channels (as Chunk::pitch).
inline int64_t product_pitch(const Chunk& c, int64_t rows) {
  return rows * c.columns + 16;
}

inline Chunk chunk_of(const Plan& p, int64_t index) {
  Chunk c;
  c.r0 = index * p.chunks.rows_per_chunk;
  c.r1 = std::min(p.chunks.tile_rows, c.r0 + p.chunks.rows_per_chunk);
  c.tiles = (c.r1 - c.r0) * p.tiles_w;
  c.columns = winograd_chunk_columns(c.r1 - c.r0, p.tiles_w);
  c.stride = p.chunks.stride;
  c.pitch = p.chunks.pitch;
  return c;
}

// Lanes [lo, hi) of 16, clamped.
inline __mmask16 lanes(int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, 16);
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// Fetches the rows a chunk reads of input channel `ci` (tiles of `tile` x `tile` outputs read
// tile + 2 rows): called for the plane two channels on while one is transformed, because a chunk reads
// a few rows of each plane, too short a run for the hardware's prefetcher.
inline void prefetch_plane_rows(const Plan& p, const Chunk& c, int64_t ci, int64_t tile) {
  const Conv2dGeometry& g = *p.g;
  const int64_t plane = g.in_h * g.in_w;
  for (int64_t r = c.r0; r < c.r1; ++r) {
    const int64_t n = r / p.tiles_h, th = r % p.tiles_h;
    // Rows after the chunk's first overlap the previous tile row's last two.
    const int64_t first = std::max<int64_t>(0, tile * th - g.pad_h + (r == c.r0 ? 0 : 2));
    const int64_t last = std::min<int64_t>(g.in_h, tile * th - g.pad_h + tile + 2);
    const char* base = reinterpret_cast<const char*>(p.x + (n * g.in_channels + ci) * plane);
    for (int64_t ih = first; ih < last; ++ih) {
      for (int64_t b = 0; b < 4 * g.in_w + 64; b += 64) _mm_prefetch(base + 4 * ih * g.in_w + b, _MM_HINT_T0);
    }
  }
}

// V[pos][ci][t] = (B^T d B)[pos] for the chunk's tiles and input channels [ci0, ci1); lanes past the
// chunk's tiles are zero.
void input_f2(const Plan& p, const Chunk& c, int64_t ci0, int64_t ci1, float* v);
void input_f4(const Plan& p, const Chunk& c, int64_t ci0, int64_t ci1, float* v);
// y = tail(A^T M A) for output channels [co0, co0 + count) of the chunk, M's rows `rows` apart per
// position (product_pitch).
void output_f2(const Plan& p, const Chunk& c, const float* m, int64_t rows, int64_t co0, int64_t count);
void output_f4(const Plan& p, const Chunk& c, const float* m, int64_t rows, int64_t co0, int64_t count);

}  // namespace tessera::kernels::conv_detail::winograd
