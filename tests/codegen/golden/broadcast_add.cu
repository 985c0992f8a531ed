typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// broadcast_add
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in1 = (const float*)in_[1];
  float* out0 = (float*)out_[0];
  for (int64_t u = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); u < end; u += ((int64_t)gridDim.x * blockDim.x)) {
    uint32_t rem = (uint32_t)u;
    const int64_t j = rem % (uint32_t)5;
    rem /= (uint32_t)5;
    const int64_t i0 = rem;
    const float v0 = in0[i0];
    const float v1 = in1[j];
    const float v2 = v0 + v1;
    out0[i0 * 5 + j] = v2;
  }
}
