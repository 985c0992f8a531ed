#pragma once
// IEEE binary16 (f16) and bfloat16 (bf16) storage types. Conversions from f32 round to nearest, ties
// to even, keep NaN a NaN and overflow to infinity, in portable code (no F16C needed).
#include <cstdint>

namespace tessera {

uint16_t f32_to_f16_bits(float value);
float f16_bits_to_f32(uint16_t bits);
uint16_t f32_to_bf16_bits(float value);
float bf16_bits_to_f32(uint16_t bits);

struct f16_t {
  uint16_t bits = 0;
  f16_t() = default;
  f16_t(float v) : bits(f32_to_f16_bits(v)) {}  // NOLINT: implicit like a builtin float type
  operator float() const { return f16_bits_to_f32(bits); }
  static f16_t from_bits(uint16_t b) {
    f16_t h;
    h.bits = b;
    return h;
  }
};

struct bf16_t {
  uint16_t bits = 0;
  bf16_t() = default;
  bf16_t(float v) : bits(f32_to_bf16_bits(v)) {}  // NOLINT: implicit like a builtin float type
  operator float() const { return bf16_bits_to_f32(bits); }
  static bf16_t from_bits(uint16_t b) {
    bf16_t h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(f16_t) == 2 && sizeof(bf16_t) == 2);

}  // namespace tessera
