typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// relu_axpb
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in2 = (const float*)in_[2];
  float* out0 = (float*)out_[0];
  for (int64_t u = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); u < end; u += ((int64_t)gridDim.x * blockDim.x)) {
    int64_t rem = u;
    const int64_t j = rem % 8;
    rem /= 8;
    const int64_t i0 = rem;
    const float v0 = in0[i0 * 8 + j];
    const float v2 = v0 * 2.0f;
    const float v3 = in2[j];
    const float v4 = v2 + v3;
    const bool v6 = (v4 < 0.0f);
    const float v7 = (v6 ? 0.0f : v4);
    out0[i0 * 8 + j] = v7;
  }
}
