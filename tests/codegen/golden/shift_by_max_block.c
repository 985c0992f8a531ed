typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// shift_by_max_block
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  for (int64_t o = begin; o < end; ++o) {
    const int64_t i0 = o;
    float a0 = (-__builtin_inff());
    int n0 = 0;
#pragma omp simd reduction(max:a0) reduction(|:n0)
    for (int64_t j = 0; j < 4096; ++j) {
      const float v0 = in0[i0 * 4096 + j];
      a0 = v0 > a0 ? v0 : a0;
      n0 |= v0 != v0;
    }
    const float w1 = (n0 ? __builtin_nanf("") : a0);
#pragma omp simd
    for (int64_t j = 0; j < 4096; ++j) {
      const float w0 = in0[i0 * 4096 + j];
      const float w2 = w0 - w1;
      const float w3 = __builtin_expf(w2);
      out0[i0 * 4096 + j] = w3;
    }
  }
}
