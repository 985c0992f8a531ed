typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// broadcast_add
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in1 = (const float*)in_[1];
  float* out0 = (float*)out_[0];
  int64_t flat = begin;
  while (flat < end) {
    const int64_t row = flat / 5;
    const int64_t j0 = flat - row * 5;
    const int64_t j1 = end - flat < 5 - j0 ? j0 + (end - flat) : 5;
    const int64_t i0 = row;
    const float v0 = in0[i0];
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) {
      const float v1 = in1[j];
      const float v2 = v0 + v1;
      out0[i0 * 5 + j] = v2;
    }
    flat += j1 - j0;
  }
}
