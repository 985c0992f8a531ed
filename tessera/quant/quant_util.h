#pragma once
// Small helpers shared by the reference encoders (internal to tessera/quant).
#include <cstdint>
#include <cstring>

namespace tessera::quant::detail {

// ggml's nearest_int: adding 1.5 * 2^23 rounds to the nearest integer (ties to even) in the float
// unit, and the integer is read back from the mantissa. Exact for |v| < 2^22; for larger or
// non-finite v it returns some integer (callers clamp), never undefined behaviour.
inline int nearest_int(float v) {
  const float shifted = v + 12582912.f;
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof(bits));
  return (bits & 0x007fffff) - 0x00400000;
}

// C's (int8_t)v / (uint8_t)v truncation toward zero for v inside the target range, as ggml uses it;
// out-of-range and NaN inputs (undefined in C) saturate instead.
inline int trunc_to_int8(float v) {
  if (!(v > -129.0f)) return -128;  // also NaN
  if (!(v < 128.0f)) return 127;
  return static_cast<int>(v);
}
inline uint8_t trunc_to_uint8(float v) {
  if (!(v > -1.0f)) return 0;
  if (!(v < 256.0f)) return 255;
  return static_cast<uint8_t>(v);
}

// Writes block i of an output row (byte-wise, so the row needs no alignment).
template <class Block>
void store(void* dst, int64_t i, const Block& b) {
  std::memcpy(static_cast<uint8_t*>(dst) + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
}

}  // namespace tessera::quant::detail
