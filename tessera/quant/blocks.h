#pragma once
// Byte layouts of the GGML block formats, exactly as GGUF files store them (little-endian; `d`, `m`,
// `dmin` are IEEE f16 bit patterns). Each struct is checked against the size ggml uses, so a layout
// mistake fails to compile instead of corrupting files.
#include <cstdint>

namespace tessera::quant {

inline constexpr int kQK = 32;    // values per block of the "legacy" formats
inline constexpr int kQKK = 256;  // values per K-quant super-block

// Q4_0: x = d * (q - 8); values j and j+16 share byte j (low, high nibble).
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// Q4_1: x = d * q + m.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
// Q5_0: x = d * (q - 16); bit 4 of value j is bit j of qh.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// Q8_0: x = d * q.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
// Q8_1: as Q8_0 plus s = d * sum(q) (activations for Q4_1/Q5_1 dot products).
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK];
};

// Q2_K: 16 groups of 16; scales[j] holds a 4-bit scale (low) and 4-bit min (high);
// x = d * sc * q - dmin * m with 2-bit q.
struct BlockQ2_K {
  uint8_t scales[kQKK / 16];
  uint8_t qs[kQKK / 4];
  uint16_t d;
  uint16_t dmin;
};
// Q3_K: 16 groups of 16, 6-bit signed scales packed in 12 bytes, 2 low bits in qs and the third bit in
// hmask; x = d * (sc - 32) * (q - 4).
struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[12];
  uint16_t d;
};
// Q4_K: 8 groups of 32, 6-bit scales and mins packed in 12 bytes; x = d * sc * q - dmin * m.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
// Q5_K: as Q4_K with a fifth bit per value in qh.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
// Q6_K: 16 groups of 16 with int8 scales; 4 low bits in ql, 2 high bits in qh; x = d * sc * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};
// Q8_K: activations for K-quant dot products; f32 scale and the sums of each group of 16.
struct BlockQ8_K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

// The 6-bit scale and min of group j (0..7) of a Q4_K/Q5_K block: groups 0-3 keep theirs in the low 6
// bits of bytes j and j+4; groups 4-7 split theirs into a nibble of byte j+4 and the top 2 bits of
// bytes j-4 (scale) and j (min).
inline void k4_scale_min(int j, const uint8_t* scales, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

// The signed 6-bit scale of group j (0..15) of a Q3_K block, minus its bias of 32: the low nibble sits
// in byte j (groups 0-7) or the high nibble of byte j-8; the top 2 bits in byte 8 + j%4 at bit 2*(j/4).
inline int q3k_scale(int j, const uint8_t* scales) {
  const int low = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
  const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace tessera::quant
