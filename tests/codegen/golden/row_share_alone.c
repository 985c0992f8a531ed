typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// row_share_alone
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  for (int64_t o = begin; o < end; ++o) {
    const int64_t i0 = o;
    double a0 = 0.0;
#pragma omp simd reduction(+:a0)
    for (int64_t j = 0; j < 12; ++j) {
      const float v0 = in0[i0 * 12 + j];
      const double v1 = (double)v0;
      a0 += v1;
    }
    const double w1 = a0;
    const float w2 = (float)w1;
#pragma omp simd
    for (int64_t j = 0; j < 12; ++j) {
      const float w0 = in0[i0 * 12 + j];
      const float w3 = w0 / w2;
      out0[i0 * 12 + j] = w3;
    }
  }
}
