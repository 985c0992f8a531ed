#pragma once
// Winograd F(2x2, 3x3) and F(4x4, 3x3) for 3x3, stride-1 convolutions of one group (AVX-512;
// conv_winograd_avx512.cpp): each m x m block of outputs ("tile", m = 2 or 4) comes from its
// (m+2) x (m+2) input patch d and the 3x3 kernel g as
//   Y = A^T [(G g G^T) . (B^T d B)] A,
// so a tile's 9 m^2 multiplies per channel pair become (m+2)^2 (16 for 4 outputs, 36 for 16), done as
// one product per position of the transformed patch, of [out channels x in channels] by [in channels x
// tiles]. The weights' transform U = G g G^T is packed once per executable; the input's and the
// output's are vectorised over 16 tiles of one tile row, so the NCHW planes are read and written
// directly.
// Internal to tessera/kernels/cpu/conv_*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/conv_internal.h"

namespace tessera::kernels::conv_detail {

// Rows of out channels per packed weight block (the product's register tile height).
constexpr int64_t kWinogradRows = 8;

// Whether g has the shape Winograd computes (any CPU), and whether the automatic choice runs it on
// this one (AVX-512, channel and tile counts where it beats direct tiles).
bool winograd_may_apply(const Conv2dGeometry& g);
bool winograd_can_run(const Conv2dGeometry& g);  // ConvAlgorithm::winograd: the shape, on an AVX-512 CPU
bool winograd_apply(const Conv2dGeometry& g);
// The tile the automatic choice uses for g: 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3)).
int winograd_tile(const Conv2dGeometry& g);
constexpr int64_t winograd_positions(int tile) {
  return (tile + 2) * (tile + 2);
}

// The transformed weights for `tile`: a header (which records it), then per position per block of
// kWinogradRows out channels in_channels x kWinogradRows floats (rows past out_channels zero).
// winograd_packed_floats has room for either tile.
int64_t winograd_packed_floats(const Conv2dGeometry& g);
void winograd_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool, int tile);
// The tile `packed` holds g's weights for, or 0 when it holds something else.
int winograd_packed_tile(const Conv2dGeometry& g, const float* packed);
constexpr int64_t kWinogradHeaderFloats = 16;

// How the tiles are cut into chunks: whole rows of output tiles (across images), as many as keep a
// chunk's transformed input (positions x in_channels x tiles) within about 2 MiB.
struct WinogradChunks {
  int tile;
  int64_t positions;
  int64_t tiles_h, tiles_w, segments;  // tiles per plane, and 16-tile segments per tile row
  int64_t tile_rows, rows_per_chunk, count;  // tile rows of the batch, per chunk, and chunks
  // A full chunk's layout: each position and channel a line of `stride` floats (room for the last
  // segment's whole vector); positions `pitch` floats apart, a cache line more than their lines (at a
  // multiple of 4 KiB the positions' lines of one tile would share a cache set).
  int64_t stride, pitch;
  int64_t floats() const { return positions * pitch + 16; }  // one chunk's transformed input, with slack
};
// Columns a chunk of `rows` tile rows multiplies: its tiles rounded up to whole vectors of 16.
inline int64_t winograd_chunk_columns(int64_t rows, int64_t tiles_w) { return (rows * tiles_w + 15) / 16 * 16; }
// `max_rows` (> 0) caps the tile rows per chunk.
WinogradChunks winograd_chunks(const Conv2dGeometry& g, int tile, int64_t max_rows = 0);
// Columns the products of all chunks multiply (each chunk's tiles rounded up to whole vectors).
int64_t winograd_columns(const WinogradChunks& c);
// Up to this many chunks are transformed once into the workspace, shared by all threads (one image
// of a small plane: the threads split its output channels); more, each task transforms its own.
constexpr int64_t kWinogradSharedChunks = 8;

// The weights' transform when not packed beforehand, and the shared chunks (the per-thread tiles
// live in thread scratch).
int64_t winograd_workspace_bytes(const Conv2dGeometry& g, bool weights_packed);
// `tile`: 2 or 4, or 0 for winograd_tile's choice (weights packed for a tile run with it).
void winograd_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                      const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                      runtime::ThreadPool& pool, int tile);

}  // namespace tessera::kernels::conv_detail
