// Winograd F(2x2, 3x3) and F(4x4, 3x3): which convolutions take them, and the weights' transform
// U = G g G^T packed for the products of conv_winograd_avx512.cpp (portable: it runs once, when an
// executable is built).
#include "tessera/kernels/cpu/conv_winograd.h"

#include <algorithm>
#include <cstring>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/x86_kernels.h"

namespace tessera::kernels::conv_detail {

namespace {

constexpr int32_t kMagic = 0x57564e43;  // "CNVW"

struct Header {
  int32_t magic, out_channels, in_channels, tile;
};

int64_t row_blocks(const Conv2dGeometry& g) {
  return (g.out_channels + kWinogradRows - 1) / kWinogradRows;
}

}  // namespace

bool winograd_may_apply(const Conv2dGeometry& g) {
  return g.groups == 1 && g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 &&
         g.dilation_h == 1 && g.dilation_w == 1 && g.pad_h <= 2 && g.pad_w <= 2;
}

bool winograd_can_run(const Conv2dGeometry& g) {
  return TESSERA_X86_KERNELS && use_avx512() && winograd_may_apply(g);
}

bool winograd_apply(const Conv2dGeometry& g) {
  // Few channels leave the products too short to pay for the transforms; few 2x2 tiles (one image of
  // 7x7: 16) read the transformed weights, 16/9 the size of the kernel's, for too little work each
  // (bench_conv --winograd, two threads, batch 1, F(2x2): 512 channels on 7x7 0.95x as fast as direct
  // tiles, 256 on 14x14 (49 tiles) 1.2x, the larger planes 1.4-1.9x).
  const int64_t tiles = g.batch * ((g.out_h + 1) / 2) * ((g.out_w + 1) / 2);
  return winograd_can_run(g) && g.in_channels >= 16 && g.out_channels >= 16 && tiles >= 32;
}

int winograd_tile(const Conv2dGeometry& g) {
  // bench_conv --winograd (one thread) against direct tiles: F(4x4) 1.9-2.3x on ResNet-18's 56x56 and
  // 28x28 layers at batch 1 and 16 where F(2x2) gives 1.5-1.75x; on 14x14 1.65x against 1.2x at batch
  // 1 and about even at 16; on 7x7 (8x8 computed either way) F(4x4)'s 36 positions of weights cost
  // more than they save (0.35x at batch 1, even at 16).
  return g.out_h * g.out_w >= 14 * 14 ? 4 : 2;
}

int64_t winograd_packed_floats(const Conv2dGeometry& g) {
  return kWinogradHeaderFloats + winograd_positions(4) * row_blocks(g) * kWinogradRows * g.in_channels;
}

namespace {

// G g G^T for F(2x2, 3x3): G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] (4 x 3).
void transform_kernel_f2(const float* k, float* u) {
  float t[4][3];  // G g: rows of G against the kernel's columns
  for (int c = 0; c < 3; ++c) {
    t[0][c] = k[c];
    t[1][c] = 0.5f * (k[c] + k[3 + c] + k[6 + c]);
    t[2][c] = 0.5f * (k[c] - k[3 + c] + k[6 + c]);
    t[3][c] = k[6 + c];
  }
  for (int i = 0; i < 4; ++i) {  // (G g) G^T
    u[4 * i + 0] = t[i][0];
    u[4 * i + 1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
    u[4 * i + 2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
    u[4 * i + 3] = t[i][2];
  }
}

// G g G^T for F(4x4, 3x3) (interpolation points 0, 1, -1, 2, -2 and infinity), in double:
// G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1] (6 x 3).
void transform_kernel_f4(const float* k, float* u) {
  static constexpr double G[6][3] = {{0.25, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  double t[6][3];
  for (int i = 0; i < 6; ++i)
    for (int c = 0; c < 3; ++c) t[i][c] = G[i][0] * k[c] + G[i][1] * k[3 + c] + G[i][2] * k[6 + c];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      u[6 * i + j] = static_cast<float>(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
}

}  // namespace

void winograd_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool, int tile) {
  const Header h{kMagic, static_cast<int32_t>(g.out_channels), static_cast<int32_t>(g.in_channels), tile};
  const int64_t positions = winograd_positions(tile);
  std::memset(dst, 0, sizeof(float) * kWinogradHeaderFloats);
  std::memcpy(dst, &h, sizeof(h));
  float* out = dst + kWinogradHeaderFloats;
  const int64_t blocks = row_blocks(g), cin = g.in_channels;
  // U[pos][block][ci][r]: position pos = (tile + 2) i + j of G g G^T for out channel block * 8 + r.
  pool.parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t r = 0; r < kWinogradRows; ++r) {
        const int64_t co = b * kWinogradRows + r;
        for (int64_t ci = 0; ci < cin; ++ci) {
          float u[36] = {};
          if (co < g.out_channels) {
            const float* k = w + (co * cin + ci) * 9;
            if (tile == 4) {
              transform_kernel_f4(k, u);
            } else {
              transform_kernel_f2(k, u);
            }
          }
          for (int64_t pos = 0; pos < positions; ++pos)
            out[((pos * blocks + b) * cin + ci) * kWinogradRows + r] = u[pos];
        }
      }
    }
  });
}

int winograd_packed_tile(const Conv2dGeometry& g, const float* packed) {
  Header h;
  std::memcpy(&h, packed, sizeof(h));
  const bool ours = h.magic == kMagic && h.out_channels == g.out_channels && h.in_channels == g.in_channels &&
                    (h.tile == 2 || h.tile == 4);
  return ours ? h.tile : 0;
}

WinogradChunks winograd_chunks(const Conv2dGeometry& g, int tile, int64_t max_rows) {
  WinogradChunks c;
  c.tile = tile;
  c.positions = winograd_positions(tile);
  c.tiles_h = (g.out_h + tile - 1) / tile;
  c.tiles_w = (g.out_w + tile - 1) / tile;
  c.segments = (c.tiles_w + 15) / 16;
  c.tile_rows = g.batch * c.tiles_h;
  // Measured with bench_conv --winograd at batch 16: 64 tiles of 512 channels (2 MiB) beat 16 (the
  // weights are read once per chunk); at most 128 tiles (8 vectors) for fewer channels.
  const int64_t chunk_tiles =
      std::clamp<int64_t>(16 * 32768 / (c.positions * std::max<int64_t>(1, g.in_channels)), 16, 128);
  c.rows_per_chunk = std::min(std::max<int64_t>(1, chunk_tiles / c.tiles_w), std::max<int64_t>(1, c.tile_rows));
  if (max_rows > 0) c.rows_per_chunk = std::min(c.rows_per_chunk, max_rows);
  c.count = (c.tile_rows + c.rows_per_chunk - 1) / c.rows_per_chunk;
  const int64_t columns = winograd_chunk_columns(c.rows_per_chunk, c.tiles_w);
  c.stride = std::max(columns, ((c.rows_per_chunk - 1) * c.tiles_w + 16 * c.segments + 15) / 16 * 16);
  c.pitch = g.in_channels * c.stride + 16;
  return c;
}

int64_t winograd_columns(const WinogradChunks& c) {
  const int64_t full = c.tile_rows / c.rows_per_chunk, left = c.tile_rows % c.rows_per_chunk;
  return full * winograd_chunk_columns(c.rows_per_chunk, c.tiles_w) + winograd_chunk_columns(left, c.tiles_w);
}

int64_t winograd_workspace_bytes(const Conv2dGeometry& g, bool weights_packed) {
  int64_t shared = 0;  // room for either tile's
  for (int tile : {2, 4}) {
    const WinogradChunks c = winograd_chunks(g, tile);
    if (c.count <= kWinogradSharedChunks) shared = std::max(shared, c.count * padded_floats(c.floats()));
  }
  return 4 * ((weights_packed ? 0 : padded_floats(winograd_packed_floats(g))) + shared);
}

}  // namespace tessera::kernels::conv_detail
