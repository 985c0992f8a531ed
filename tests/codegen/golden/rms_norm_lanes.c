typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// rms_norm_lanes
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in3 = (const float*)in_[3];
  float* out0 = (float*)out_[0];
  for (int64_t o = begin; o < end; ++o) {
    const int64_t i0 = o;
    double a0 = 0.0;
#pragma omp simd reduction(+:a0)
    for (int64_t j = 0; j < 128; ++j) {
      const float v0 = in0[i0 * 128 + j];
      const float v1 = v0 * v0;
      const double v2 = (double)v1;
      a0 += v2;
    }
    const double w1 = a0;
    const float w2 = (float)w1;
    const float w4 = w2 * 0.0078125f;
    const float w6 = w4 + 1.1920929e-07f;
    const float w7 = __builtin_sqrtf(w6);
    const float w9 = 1.0f / w7;
#pragma omp simd
    for (int64_t j = 0; j < 128; ++j) {
      const float w0 = in0[i0 * 128 + j];
      const float w10 = w0 * w9;
      const float w11 = in3[j];
      const float w12 = w10 * w11;
      out0[i0 * 128 + j] = w12;
    }
  }
}
