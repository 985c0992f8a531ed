typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// row_share_alone
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  for (int64_t o = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); o < end; o += ((int64_t)gridDim.x * blockDim.x)) {
    const int64_t i0 = o;
    double a0 = 0.0;
    for (int64_t j = 0; j < 12; ++j) {
      const float v0 = in0[i0 * 12 + j];
      const double v1 = (double)v0;
      a0 += v1;
    }
    for (int64_t j = 0; j < 12; ++j) {
      const float w0 = in0[i0 * 12 + j];
      const double w1 = a0;
      const float w2 = (float)w1;
      const float w3 = w0 / w2;
      out0[i0 * 12 + j] = w3;
    }
  }
}
