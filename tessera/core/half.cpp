#include "tessera/core/half.h"

#include <cstring>

namespace tessera {
namespace {

uint32_t float_bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}

float bits_float(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

}  // namespace

uint16_t f32_to_f16_bits(float value) {
  const uint32_t x = float_bits(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;

  if (exp == 0xff) {  // inf or nan; keep nan quiet and non-zero
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? (0x200u | (mant >> 13)) : 0u));
  }
  const int32_t e = static_cast<int32_t>(exp) - 127 + 15;  // rebiased exponent
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    // Subnormal f16 (or zero): shift the full significand right, rounding to nearest even.
    if (e < -10) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);  // a carry into bit 10 yields the smallest normal
  }
  uint32_t out = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) ++out;  // a carry may round up to inf: correct
  return static_cast<uint16_t>(sign | out);
}

float f16_bits_to_f32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    // Normalise the subnormal: value = mant * 2^-24.
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    mant &= 0x3ffu;
    return bits_float(sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13));
  }
  return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t f32_to_bf16_bits(float value) {
  const uint32_t x = float_bits(value);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) {
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan, never rounds to inf
  }
  const uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding_bias) >> 16);
}

float bf16_bits_to_f32(uint16_t bits) { return bits_float(static_cast<uint32_t>(bits) << 16); }

}  // namespace tessera
