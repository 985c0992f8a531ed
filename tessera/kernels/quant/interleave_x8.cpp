#include "tessera/kernels/quant/interleave_x8.h"

#include <algorithm>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quantize.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels::quant {

namespace {

using tessera::quant::BlockQ4_0;
using tessera::quant::BlockQ4_K;
using tessera::quant::BlockQ8_0;

constexpr int64_t kQ4_0GroupBytes = kX8Rows * sizeof(BlockQ4_0);  // 144
constexpr int64_t kQ8_0GroupBytes = kX8Rows * sizeof(BlockQ8_0);  // 272
constexpr int64_t kQ4_KGroupBytes = kX8Rows * sizeof(BlockQ4_K);  // 1152
constexpr int kQ4_KScalesAt = 32, kQ4_KMinsAt = 80, kQ4_KCodesAt = 128;

// The 64 6-bit values of a table v[g][r] in 48 bytes: the expanded table E (64 bytes, the value of
// (g, r) at x8_six_bit_position) keeps its low nibbles in 32 bytes (E[i] low, E[32 + i] high) and its
// top two bits in 16 (byte i: E[i], E[16 + i], E[32 + i], E[48 + i] at bits 0, 2, 4, 6).
void pack_six_bit(const uint8_t (&v)[8][8], uint8_t* out) {
  uint8_t e[64];
  for (int g = 0; g < 8; ++g) {
    for (int r = 0; r < 8; ++r) e[x8_six_bit_position(g, r)] = v[g][r];
  }
  for (int i = 0; i < 32; ++i) out[i] = static_cast<uint8_t>((e[i] & 0xF) | (e[32 + i] & 0xF) << 4);
  for (int i = 0; i < 16; ++i) {
    out[32 + i] =
        static_cast<uint8_t>(e[i] >> 4 | (e[16 + i] >> 4) << 2 | (e[32 + i] >> 4) << 4 | (e[48 + i] >> 4) << 6);
  }
}

void unpack_six_bit(const uint8_t* in, uint8_t (&v)[8][8]) {
  uint8_t e[64];
  for (int i = 0; i < 32; ++i) {
    e[i] = in[i] & 0xF;
    e[32 + i] = in[i] >> 4;
  }
  for (int i = 0; i < 16; ++i) {
    for (int part = 0; part < 4; ++part)
      e[16 * part + i] |= static_cast<uint8_t>(((in[32 + i] >> (2 * part)) & 3) << 4);
  }
  for (int g = 0; g < 8; ++g) {
    for (int r = 0; r < 8; ++r) v[g][r] = e[x8_six_bit_position(g, r)];
  }
}

// Value i (0..255) of a Q4_K block's codes: groups 2c and 2c+1 share bytes 32c..32c+31 (low, high nibble).
uint8_t q4_k_code(const BlockQ4_K& b, int i) {
  const int chunk = i / 64, within = i % 64;
  const uint8_t byte = b.qs[32 * chunk + within % 32];
  return within < 32 ? byte & 0xF : byte >> 4;
}

void set_q4_k_code(BlockQ4_K& b, int i, uint8_t q) {
  const int chunk = i / 64, within = i % 64;
  uint8_t& byte = b.qs[32 * chunk + within % 32];
  byte = within < 32 ? static_cast<uint8_t>((byte & 0xF0) | q) : static_cast<uint8_t>((byte & 0x0F) | q << 4);
}

// Packs 6-bit scales and mins of 8 groups into a Q4_K block's 12 bytes (inverse of k4_scale_min).
void pack_k4_scales(const uint8_t* sc, const uint8_t* m, uint8_t* scales) {
  for (int j = 0; j < 4; ++j) {
    scales[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    scales[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | (m[j + 4] & 0xF) << 4);
  }
}

// One group of 8 rows, block b: GGUF blocks (row r at rows[r]) <-> the x8 group block. Q4_0 and Q8_0
// blocks are an f16 scale and kCodeBytes code bytes, dealt out four bytes at a time.
template <int kCodeBytes>
void scale_and_codes_to_x8(const uint8_t* const* rows, uint8_t* out) {
  for (int r = 0; r < kX8Rows; ++r) {
    std::memcpy(out + 2 * r, rows[r], 2);
    for (int c = 0; c < kCodeBytes / 4; ++c) std::memcpy(out + 16 + 32 * c + 4 * r, rows[r] + 2 + 4 * c, 4);
  }
}

template <int kCodeBytes>
void scale_and_codes_from_x8(const uint8_t* in, uint8_t* const* rows) {
  for (int r = 0; r < kX8Rows; ++r) {
    std::memcpy(rows[r], in + 2 * r, 2);
    for (int c = 0; c < kCodeBytes / 4; ++c) std::memcpy(rows[r] + 2 + 4 * c, in + 16 + 32 * c + 4 * r, 4);
  }
}

void q4_k_to_x8(const uint8_t* const* rows, uint8_t* out) {
  uint8_t sc[8][8], mn[8][8];
  for (int r = 0; r < kX8Rows; ++r) {
    BlockQ4_K b;
    std::memcpy(&b, rows[r], sizeof b);
    std::memcpy(out + 2 * r, &b.d, 2);
    std::memcpy(out + 16 + 2 * r, &b.dmin, 2);
    for (int g = 0; g < 8; ++g) tessera::quant::k4_scale_min(g, b.scales, &sc[g][r], &mn[g][r]);
    for (int g = 0; g < 8; ++g) {
      for (int c = 0; c < 4; ++c) {
        for (int t = 0; t < 4; ++t) {
          const int i = 32 * g + 8 * c + t;
          out[kQ4_KCodesAt + 128 * g + 32 * c + 4 * r + t] =
              static_cast<uint8_t>(q4_k_code(b, i) | q4_k_code(b, i + 4) << 4);
        }
      }
    }
  }
  pack_six_bit(sc, out + kQ4_KScalesAt);
  pack_six_bit(mn, out + kQ4_KMinsAt);
}

void q4_k_from_x8(const uint8_t* in, uint8_t* const* rows) {
  uint8_t sc[8][8], mn[8][8];
  unpack_six_bit(in + kQ4_KScalesAt, sc);
  unpack_six_bit(in + kQ4_KMinsAt, mn);
  for (int r = 0; r < kX8Rows; ++r) {
    BlockQ4_K b{};
    std::memcpy(&b.d, in + 2 * r, 2);
    std::memcpy(&b.dmin, in + 16 + 2 * r, 2);
    uint8_t row_sc[8], row_mn[8];
    for (int g = 0; g < 8; ++g) {
      row_sc[g] = sc[g][r];
      row_mn[g] = mn[g][r];
    }
    pack_k4_scales(row_sc, row_mn, b.scales);
    for (int g = 0; g < 8; ++g) {
      for (int c = 0; c < 4; ++c) {
        for (int t = 0; t < 4; ++t) {
          const uint8_t byte = in[kQ4_KCodesAt + 128 * g + 32 * c + 4 * r + t];
          const int i = 32 * g + 8 * c + t;
          set_q4_k_code(b, i, byte & 0xF);
          set_q4_k_code(b, i + 4, byte >> 4);
        }
      }
    }
    std::memcpy(rows[r], &b, sizeof b);
  }
}

// One type's pair of block converters.
struct Codec {
  void (*to_x8)(const uint8_t* const* rows, uint8_t* out);
  void (*from_x8)(const uint8_t* in, uint8_t* const* rows);
};

Codec codec_of(GgmlType type) {
  switch (type) {
    case GgmlType::q4_0:
      return {scale_and_codes_to_x8<16>, scale_and_codes_from_x8<16>};
    case GgmlType::q8_0:
      return {scale_and_codes_to_x8<32>, scale_and_codes_from_x8<32>};
    default:
      return {q4_k_to_x8, q4_k_from_x8};
  }
}

void check(GgmlType type, int64_t n, const char* what) {
  TESSERA_CHECK(x8_layout_exists(type), "{}: no x8 layout for {} (Q4_0, Q8_0 and Q4_K have one)", what,
                tessera::quant::type_name(type));
  TESSERA_CHECK(n >= 0 && n % kX8Rows == 0, "{}: {} rows are not a multiple of 8", what, n);
}

template <bool kToX8>
void convert(GgmlType type, const uint8_t* src, int64_t n, int64_t k, uint8_t* dst, const char* what) {
  check(type, n, what);
  const int64_t row = tessera::quant::row_bytes(type, k, what);
  const int64_t block = tessera::quant::type_traits(type).type_size;
  const int64_t nb = row / block;
  const int64_t group_block = kX8Rows * block;
  const Codec codec = codec_of(type);
  // Groups are independent: a model's weights (hundreds of MiB, repacked while its graph compiles)
  // are spread over the pool, a few groups at a time.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, kX8Rows * row));
  runtime::default_pool().parallel_for(n / kX8Rows, grain, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) {
      const uint8_t* x8 = (kToX8 ? dst : src) + g * kX8Rows * row;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* row_blocks[kX8Rows];
        for (int r = 0; r < kX8Rows; ++r) {
          row_blocks[r] = const_cast<uint8_t*>(kToX8 ? src : dst) + (g * kX8Rows + r) * row + b * block;
        }
        uint8_t* x8_block = const_cast<uint8_t*>(x8) + b * group_block;
        if constexpr (kToX8) {
          codec.to_x8(row_blocks, x8_block);
        } else {
          codec.from_x8(x8_block, row_blocks);
        }
      }
    }
  });
}

}  // namespace

static_assert(kQ4_0GroupBytes == 144 && kQ8_0GroupBytes == 272 && kQ4_KGroupBytes == 1152,
              "x8 group blocks keep the GGUF byte count");

bool x8_layout_exists(GgmlType type) {
  return type == GgmlType::q4_0 || type == GgmlType::q8_0 || type == GgmlType::q4_k;
}

bool can_interleave_x8(GgmlType type, int64_t n) {
  return x8_layout_exists(type) && n > 0 && n % kX8Rows == 0;
}

int x8_six_bit_position(int g, int r) {
  // Groups 0-3 in the first 32 bytes, 4-7 in the second; within each, rows 0-3 in the low 16 bytes and
  // rows 4-7 in the high 16 (one 128-bit lane each, so that in-lane byte shuffles can pick them).
  return 32 * (g / 4) + 16 * (r / 4) + 4 * (g % 4) + r % 4;
}

void interleave_x8(GgmlType type, const uint8_t* rows, int64_t n, int64_t k, uint8_t* x8) {
  convert<true>(type, rows, n, k, x8, "interleave_x8");
}

void deinterleave_x8(GgmlType type, const uint8_t* x8, int64_t n, int64_t k, uint8_t* rows) {
  convert<false>(type, x8, n, k, rows, "deinterleave_x8");
}

}  // namespace tessera::kernels::quant
