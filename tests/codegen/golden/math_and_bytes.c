typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

static inline int8_t tsr_f32_to_i8(float v) {
  if (__builtin_isnan(v)) return 0;
  if (v <= (-128.0f)) return (-128);
  if (v >= 127.0f) return 127;
  return (int8_t)v;
}

// math_and_bytes
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const uint8_t* in4 = (const uint8_t*)in_[4];
  int8_t* out0 = (int8_t*)out_[0];
  uint8_t* out1 = (uint8_t*)out_[1];
  uint8_t* out2 = (uint8_t*)out_[2];
#pragma omp simd
  for (int64_t j = begin; j < end; ++j) {
    const _Bool v0 = (in4[j] != 0);
    const float v1 = in0[j];
    const float v2 = __builtin_erff(v1);
    const _Bool v4 = (v2 > 0.0f);
    const _Bool v5 = (v0 & v4);
    const float v6 = __builtin_log1pf(v2);
    const _Bool v8 = (v6 > 0.5f);
    const float v10 = v2 * 100.0f;
    const int8_t v11 = tsr_f32_to_i8(v10);
    out2[j] = v5;
    out1[j] = v8;
    out0[j] = v11;
  }
}
