typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// relu_axpb
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in2 = (const float*)in_[2];
  float* out0 = (float*)out_[0];
  int64_t flat = begin;
  while (flat < end) {
    const int64_t row = flat / 8;
    const int64_t j0 = flat - row * 8;
    const int64_t j1 = end - flat < 8 - j0 ? j0 + (end - flat) : 8;
    const int64_t i0 = row;
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) {
      const float v0 = in0[i0 * 8 + j];
      const float v2 = v0 * 2.0f;
      const float v3 = in2[j];
      const float v4 = v2 + v3;
      const _Bool v6 = (v4 < 0.0f);
      const float v7 = (v6 ? 0.0f : v4);
      out0[i0 * 8 + j] = v7;
    }
    flat += j1 - j0;
  }
}
