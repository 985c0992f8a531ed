// Winograd F(2x2, 3x3): which convolutions take it, and the weights' transform U = G g G^T packed
// for the products of conv_winograd_avx512.cpp (portable: it runs once, when an executable is built).
#include "tessera/kernels/cpu/conv_winograd.h"

#include <algorithm>
#include <cstring>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/x86_kernels.h"

namespace tessera::kernels::conv_detail {

namespace {

constexpr int32_t kMagic = 0x57564e43;  // "CNVW"

struct Header {
  int32_t magic, out_channels, in_channels;
  bool operator==(const Header&) const = default;
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
  // Few channels leave the products too short to pay for the transforms; few tiles (one image of
  // 7x7: 16) read the transformed weights, 16/9 the size of the kernel's, for too little work each
  // (bench_conv --winograd, two threads, batch 1: 512 channels on 7x7 0.95x as fast as direct tiles,
  // 256 on 14x14 (49 tiles) 1.2x, the larger planes 1.4-1.9x).
  const int64_t tiles = g.batch * ((g.out_h + 1) / 2) * ((g.out_w + 1) / 2);
  return winograd_can_run(g) && g.in_channels >= 16 && g.out_channels >= 16 && tiles >= 32;
}

int64_t winograd_packed_floats(const Conv2dGeometry& g) {
  return kWinogradHeaderFloats + 16 * row_blocks(g) * kWinogradRows * g.in_channels;
}

void winograd_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool) {
  const Header h{kMagic, static_cast<int32_t>(g.out_channels), static_cast<int32_t>(g.in_channels)};
  std::memset(dst, 0, sizeof(float) * kWinogradHeaderFloats);
  std::memcpy(dst, &h, sizeof(h));
  float* out = dst + kWinogradHeaderFloats;
  const int64_t blocks = row_blocks(g), cin = g.in_channels;
  // U[pos][block][ci][r]: position pos = 4 i + j of G g G^T for out channel block * 8 + r.
  pool.parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t r = 0; r < kWinogradRows; ++r) {
        const int64_t co = b * kWinogradRows + r;
        for (int64_t ci = 0; ci < cin; ++ci) {
          float u[4][4] = {};
          if (co < g.out_channels) {
            const float* k = w + (co * cin + ci) * 9;
            float t[4][3];  // G g: rows of G against the kernel's columns
            for (int c = 0; c < 3; ++c) {
              t[0][c] = k[c];
              t[1][c] = 0.5f * (k[c] + k[3 + c] + k[6 + c]);
              t[2][c] = 0.5f * (k[c] - k[3 + c] + k[6 + c]);
              t[3][c] = k[6 + c];
            }
            for (int i = 0; i < 4; ++i) {  // (G g) G^T
              u[i][0] = t[i][0];
              u[i][1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
              u[i][2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
              u[i][3] = t[i][2];
            }
          }
          for (int pos = 0; pos < 16; ++pos)
            out[((pos * blocks + b) * cin + ci) * kWinogradRows + r] = u[pos / 4][pos % 4];
        }
      }
    }
  });
}

bool winograd_packed_for(const Conv2dGeometry& g, const float* packed) {
  Header h;
  std::memcpy(&h, packed, sizeof(h));
  return h == Header{kMagic, static_cast<int32_t>(g.out_channels), static_cast<int32_t>(g.in_channels)};
}

WinogradChunks winograd_chunks(const Conv2dGeometry& g) {
  WinogradChunks c;
  c.tiles_h = (g.out_h + 1) / 2;
  c.tiles_w = (g.out_w + 1) / 2;
  c.segments = (c.tiles_w + 15) / 16;
  c.tile_rows = g.batch * c.tiles_h;
  // Measured with bench_conv --winograd at batch 16: 64 tiles of 512 channels (2 MiB) beat 16 (the
  // weights are read once per chunk); at most 128 tiles (8 vectors) for fewer channels.
  const int64_t chunk_tiles = std::clamp<int64_t>(32768 / std::max<int64_t>(1, g.in_channels), 16, 128);
  c.rows_per_chunk = std::min(std::max<int64_t>(1, chunk_tiles / c.tiles_w), std::max<int64_t>(1, c.tile_rows));
  c.count = (c.tile_rows + c.rows_per_chunk - 1) / c.rows_per_chunk;
  const int64_t columns = (c.rows_per_chunk * c.tiles_w + 15) / 16 * 16;
  c.stride = std::max(columns, ((c.rows_per_chunk - 1) * c.tiles_w + 16 * c.segments + 15) / 16 * 16);
  c.pitch = g.in_channels * c.stride + 16;
  return c;
}

int64_t winograd_workspace_bytes(const Conv2dGeometry& g, bool weights_packed) {
  const WinogradChunks c = winograd_chunks(g);
  const int64_t shared = c.count <= kWinogradSharedChunks ? c.count * padded_floats(c.floats()) : 0;
  return 4 * ((weights_packed ? 0 : padded_floats(winograd_packed_floats(g))) + shared);
}

}  // namespace tessera::kernels::conv_detail
