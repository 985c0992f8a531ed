typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// layer_norm_block
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in4 = (const float*)in_[4];
  const float* in5 = (const float*)in_[5];
  float* out0 = (float*)out_[0];
  for (int64_t o = begin; o < end; ++o) {
    const int64_t i0 = o;
    double a0 = 0.0;
    double a1 = 0.0;
#pragma omp simd reduction(+:a0)
    for (int64_t j = 0; j < 4096; ++j) {
      const float v0 = in0[i0 * 4096 + j];
      const double v1 = (double)v0;
      a0 += v1;
    }
    const double c1 = a0;
    const float c2 = (float)c1;
    const float c4 = c2 * 0.00024414062f;
#pragma omp simd reduction(+:a1)
    for (int64_t j = 0; j < 4096; ++j) {
      const float c0 = in0[i0 * 4096 + j];
      const float c5 = c0 - c4;
      const float c6 = c5 * c5;
      const double c7 = (double)c6;
      a1 += c7;
    }
    const double w1 = a0;
    const float w2 = (float)w1;
    const float w4 = w2 * 0.00024414062f;
    const double w6 = a1;
    const float w7 = (float)w6;
    const float w8 = w7 * 0.00024414062f;
    const float w10 = w8 + 1e-05f;
    const float w11 = __builtin_sqrtf(w10);
    const float w13 = 1.0f / w11;
#pragma omp simd
    for (int64_t j = 0; j < 4096; ++j) {
      const float w0 = in0[i0 * 4096 + j];
      const float w5 = w0 - w4;
      const float w14 = w5 * w13;
      const float w15 = in4[j];
      const float w16 = w14 * w15;
      const float w17 = in5[j];
      const float w18 = w16 + w17;
      out0[i0 * 4096 + j] = w18;
    }
  }
}
