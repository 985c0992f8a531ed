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
  for (int64_t u0 = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); u0 < end; u0 += ((int64_t)gridDim.x * blockDim.x) * 4) {
    float L0[4];
    float L1[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int64_t u = u0 + q * ((int64_t)gridDim.x * blockDim.x);
      if (u < end) {
        uint32_t rem = (uint32_t)u;
        const int64_t j = rem % (uint32_t)5;
        rem /= (uint32_t)5;
        const int64_t i0 = rem;
        L0[q] = in0[i0];
        L1[q] = in1[j];
      }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int64_t u = u0 + q * ((int64_t)gridDim.x * blockDim.x);
      if (u < end) {
        uint32_t rem = (uint32_t)u;
        const int64_t j = rem % (uint32_t)5;
        rem /= (uint32_t)5;
        const int64_t i0 = rem;
        const float v0 = L0[q];
        const float v1 = L1[q];
        const float v2 = v0 + v1;
        out0[i0 * 5 + j] = v2;
      }
    }
  }
}
