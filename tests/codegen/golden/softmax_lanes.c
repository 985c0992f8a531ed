typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// softmax_lanes
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  for (int64_t o = begin; o < end; ++o) {
    const int64_t i0 = o;
    float a0 = (-__builtin_inff());
    int n0 = 0;
    double a1 = 0.0;
#pragma omp simd reduction(max:a0) reduction(|:n0)
    for (int64_t j = 0; j < 256; ++j) {
      const float v0 = in0[i0 * 256 + j];
      a0 = v0 > a0 ? v0 : a0;
      n0 |= v0 != v0;
    }
    const float c1 = (n0 ? __builtin_nanf("") : a0);
#pragma omp simd reduction(+:a1)
    for (int64_t j = 0; j < 256; ++j) {
      const float c0 = in0[i0 * 256 + j];
      const float c2 = c0 - c1;
      const float c3 = __builtin_expf(c2);
      const double c4 = (double)c3;
      a1 += c4;
    }
    const float w1 = (n0 ? __builtin_nanf("") : a0);
    const double w4 = a1;
    const float w5 = (float)w4;
#pragma omp simd
    for (int64_t j = 0; j < 256; ++j) {
      const float w0 = in0[i0 * 256 + j];
      const float w2 = w0 - w1;
      const float w3 = __builtin_expf(w2);
      const float w6 = w3 / w5;
      out0[i0 * 256 + j] = w6;
    }
  }
}
