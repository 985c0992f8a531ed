typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// column_max
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  for (int64_t o = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); o < end; o += ((int64_t)gridDim.x * blockDim.x)) {
    const int64_t j = o;
    float a0 = (-__int_as_float(0x7f800000));
    int n0 = 0;
    for (int64_t i0 = 0; i0 < 4; ++i0) {
      const float v0 = in0[i0 * 8 + j];
      a0 = v0 > a0 ? v0 : a0;
      n0 |= v0 != v0;
    }
    const float e0 = (n0 ? __int_as_float(0x7fc00000) : a0);
    out0[j] = e0;
  }
}
