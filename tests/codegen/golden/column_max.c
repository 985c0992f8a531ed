typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

// column_max
void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  int64_t flat = begin;
  while (flat < end) {
    const int64_t row = flat / 8;
    const int64_t j0 = flat - row * 8;
    const int64_t j1 = end - flat < 8 - j0 ? j0 + (end - flat) : 8;
    for (int64_t jb = j0; jb < j1; jb += 1024) {
      const int64_t je = j1 - jb < 1024 ? j1 : jb + 1024;
      float a0[1024];
      unsigned char n0[1024];
      for (int64_t j = jb; j < je; ++j) {
        a0[j - jb] = (-__builtin_inff());
        n0[j - jb] = 0;
      }
      for (int64_t i0 = 0; i0 < 4; ++i0) {
#pragma omp simd
        for (int64_t j = jb; j < je; ++j) {
          const float v0 = in0[i0 * 8 + j];
          a0[j - jb] = v0 > a0[j - jb] ? v0 : a0[j - jb];
          n0[j - jb] |= v0 != v0;
        }
      }
#pragma omp simd
      for (int64_t j = jb; j < je; ++j) {
        const float e0 = (n0[j - jb] ? __builtin_nanf("") : a0[j - jb]);
        out0[j] = e0;
      }
    }
    flat += j1 - j0;
  }
}
