typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __UINT16_TYPE__ uint16_t;

static inline float tsr_f16_to_f32(uint16_t h) {
  const uint32_t em = h & 0x7fffu;
  uint32_t bits;
  if (em >= 0x7c00u) {
    bits = 0x7f800000u | ((em & 0x3ffu) << 13);  // inf, NaN
  } else if (em >= 0x0400u) {
    bits = (em << 13) + 0x38000000u;  // normal: the exponent rebiased from 15 to 127
  } else {
    const float f = (float)em * 5.9604644775390625e-8f;  // zero, subnormal: em * 2^-24, exact
    __builtin_memcpy(&bits, &f, 4);
  }
  bits |= (uint32_t)(h & 0x8000u) << 16;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t tsr_f32_to_f16(float f) {
  uint32_t x;
  __builtin_memcpy(&x, &f, 4);
  const uint32_t ax = x & 0x7fffffffu;
  uint32_t h;
  if (ax > 0x7f800000u) {
    h = 0x7e00u | ((ax >> 13) & 0x3ffu);
  } else if (ax >= 0x47800000u) {
    h = 0x7c00u;  // 2^16 and above (and inf)
  } else if (ax >= 0x38800000u) {
    h = (ax - 0x38000000u) >> 13;  // normal; a carry out of the mantissa rounds up correctly, to inf too
    const uint32_t rest = ax & 0x1fffu;
    h += rest > 0x1000u || (rest == 0x1000u && (h & 1u));
  } else if (ax >= 0x33000000u) {
    const uint32_t shift = 126u - (ax >> 23);  // subnormal: shift the whole significand into place
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    h = m >> shift;
    h += rest > half || (rest == half && (h & 1u));
  } else {
    h = 0;  // below 2^-25: rounds to zero
  }
  return (uint16_t)(h | ((x >> 16) & 0x8000u));
}

static inline float tsr_bf16_to_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t tsr_f32_to_bf16(float f) {
  uint32_t x;
  __builtin_memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);  // NaN: quiet, never inf
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// half_load_store
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const uint16_t* in0 = (const uint16_t*)in_[0];
  const uint16_t* in1 = (const uint16_t*)in_[1];
  uint16_t* out0 = (uint16_t*)out_[0];
  uint16_t* out1 = (uint16_t*)out_[1];
#pragma omp simd
  for (int64_t j = begin; j < end; ++j) {
    const uint16_t v0 = in0[j];
    const float v1 = tsr_f16_to_f32(v0);
    const float v2 = __builtin_expm1f(v1);
    const uint16_t v3 = tsr_f32_to_f16(v2);
    const float v4 = tsr_f16_to_f32(v3);
    const uint16_t v5 = tsr_f32_to_bf16(v4);
    const uint16_t v6 = in1[j];
    const float v7 = tsr_bf16_to_f32(v5);
    const float v8 = tsr_bf16_to_f32(v6);
    const float v9 = v7 * v8;
    const uint16_t v10 = tsr_f32_to_bf16(v9);
    out1[j] = v10;
    out0[j] = v3;
  }
}
