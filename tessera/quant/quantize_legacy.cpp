// Reference encoders for the 32-value block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1), following
// ggml's quantize_row_*_ref step for step: the same float operations in the same order, the same
// truncating conversions, so the bytes match llama-quantize's output exactly.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "tessera/core/half.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quant_util.h"
#include "tessera/quant/quantize.h"

namespace tessera::quant::detail {

namespace {

// The block's scale for the symmetric formats: the value of largest magnitude (its sign kept) divided
// by -levels, so that value maps to the most negative code.
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, float* min, float* max) {
  *min = FLT_MAX;
  *max = -FLT_MAX;
  for (int j = 0; j < kQK; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

// Packs value j's bit 4 into bit j of the 32-bit qh word (low half values 0-15, high half 16-31).
void pack_q5(const uint8_t q[kQK], uint8_t qs[kQK / 2], uint8_t qh_bytes[4]) {
  uint32_t qh = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + kQK / 2] & 0x0F) << 4));
    qh |= ((q[j] & 0x10u) >> 4) << j;
    qh |= ((q[j + kQK / 2] & 0x10u) >> 4) << (j + kQK / 2);
  }
  std::memcpy(qh_bytes, &qh, sizeof(qh));
}

}  // namespace

void quantize_q4_0(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    BlockQ4_0 b{};
    const float d = signed_absmax(x) / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_f16_bits(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t lo = static_cast<uint8_t>(std::min(15, trunc_to_int8(x[j] * id + 8.5f)));
      const uint8_t hi = static_cast<uint8_t>(std::min(15, trunc_to_int8(x[j + kQK / 2] * id + 8.5f)));
      b.qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
    store(y, i, b);
  }
}

void quantize_q4_1(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    BlockQ4_1 b{};
    float min, max;
    min_max(x, &min, &max);
    const float d = (max - min) / ((1 << 4) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_f16_bits(d);
    b.m = f32_to_f16_bits(min);
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t lo = static_cast<uint8_t>(std::min(15, trunc_to_int8((x[j] - min) * id + 0.5f)));
      const uint8_t hi = static_cast<uint8_t>(std::min(15, trunc_to_int8((x[j + kQK / 2] - min) * id + 0.5f)));
      b.qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
    store(y, i, b);
  }
}

void quantize_q5_0(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    BlockQ5_0 b{};
    const float d = signed_absmax(x) / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_f16_bits(d);
    uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = static_cast<uint8_t>(std::min(31, trunc_to_int8(x[j] * id + 16.5f)));
    pack_q5(q, b.qs, b.qh);
    store(y, i, b);
  }
}

void quantize_q5_1(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    BlockQ5_1 b{};
    float min, max;
    min_max(x, &min, &max);
    const float d = (max - min) / ((1 << 5) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_f16_bits(d);
    b.m = f32_to_f16_bits(min);
    uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = trunc_to_uint8((x[j] - min) * id + 0.5f);
    pack_q5(q, b.qs, b.qh);
    store(y, i, b);
  }
}

void quantize_q8_0(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    BlockQ8_0 b{};
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / ((1 << 7) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_f16_bits(d);
    for (int j = 0; j < kQK; ++j) b.qs[j] = static_cast<int8_t>(trunc_to_int8(std::round(x[j] * id)));
    store(y, i, b);
  }
}

void quantize_q8_1(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    BlockQ8_1 b{};
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / ((1 << 7) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_f16_bits(d);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      b.qs[j] = static_cast<int8_t>(trunc_to_int8(std::round(x[j] * id)));
      sum += b.qs[j];
    }
    b.s = f32_to_f16_bits(static_cast<float>(sum) * d);
    store(y, i, b);
  }
}

uint16_t f32_to_bf16_ggml(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64);  // NaN: force quiet
  return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

}  // namespace tessera::quant::detail
