typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

__device__ __forceinline__ int8_t tsr_f32_to_i8(float v) {
  if (isnan(v)) return 0;
  if (v <= (-128.0f)) return (-128);
  if (v >= 127.0f) return 127;
  return (int8_t)v;
}

// math_and_bytes
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const bool* in4 = (const bool*)in_[4];
  int8_t* out0 = (int8_t*)out_[0];
  bool* out1 = (bool*)out_[1];
  bool* out2 = (bool*)out_[2];
  for (int64_t u = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); u < end; u += ((int64_t)gridDim.x * blockDim.x)) {
    const int64_t j = u;
    const bool v0 = in4[j];
    const float v1 = in0[j];
    const float v2 = erff(v1);
    const bool v4 = (v2 > 0.0f);
    const bool v5 = (v0 & v4);
    const float v6 = log1pf(v2);
    const bool v8 = (v6 > 0.5f);
    const float v10 = v2 * 100.0f;
    const int8_t v11 = tsr_f32_to_i8(v10);
    out2[j] = v5;
    out1[j] = v8;
    out0[j] = v11;
  }
}
