#pragma once
// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a counter-based
// generator. A block of four 32-bit words is a pure function of a 128-bit counter and a 64-bit key, so
// any element of a draw can be computed independently, on any backend, in any order.
#include <array>
#include <cstdint>

namespace tessera {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;
using PhiloxBlock = std::array<uint32_t, 4>;

// The raw bijection: ten rounds of the Philox-4x32 S-box keyed by `key`.
PhiloxBlock philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key);

// Tessera's use of it: the key is the 64-bit seed (low word first) and the counter is the 64-bit
// element index (low word first) in the two low counter words, the two high words zero.
PhiloxBlock philox_block(uint64_t seed, uint64_t counter);

// Uniform floats in [0, 1) from random bits: 24 bits fill an f32 mantissa exactly, 53 bits an f64.
inline double uniform24(uint32_t bits) {
  return static_cast<double>(bits >> 8) * 0x1.0p-24;
}
inline double uniform53(uint32_t lo, uint32_t hi) {
  const uint64_t b = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  return static_cast<double>(b) * 0x1.0p-53;
}
inline uint64_t bits64(uint32_t lo, uint32_t hi) {
  return static_cast<uint64_t>(hi) << 32 | lo;
}

// High 64 bits of the 128-bit product a * b (maps 64 random bits onto [0, b) with bias < b / 2^64).
inline uint64_t mulhi64(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;  // cannot overflow
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

}  // namespace tessera
