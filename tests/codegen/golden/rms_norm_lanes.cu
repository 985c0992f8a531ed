typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// rms_norm_lanes
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in3 = (const float*)in_[3];
  float* out0 = (float*)out_[0];
  {
    const int64_t tsr_t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x);
    const int64_t tsr_lane = tsr_t % 32;
    for (int64_t ow = begin + tsr_t / 32 * 1; ow < end; ow += ((int64_t)gridDim.x * blockDim.x) / 32) {
      const int64_t o = ow + tsr_t % 32 / 32;
      const bool tsr_live = o < end;
      const int64_t i0 = o;
      double a0 = 0.0;
      if (tsr_live) {
        for (int64_t r = tsr_lane; r < 128; r += 32) {
          const int64_t j = r;
          const float v0 = in0[i0 * 128 + j];
          const float v1 = v0 * v0;
          const double v2 = (double)v1;
          a0 += v2;
        }
      }
      a0 += __shfl_xor_sync(0xffffffffu, a0, 16);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 8);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 4);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 2);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 1);
      if (tsr_live) {
        for (int64_t r = tsr_lane; r < 128; r += 32) {
          const int64_t j = r;
          const float w0 = in0[i0 * 128 + j];
          const double w1 = a0;
          const float w2 = (float)w1;
          const float w4 = w2 * 0.0078125f;
          const float w6 = w4 + 1.1920929e-07f;
          const float w7 = sqrtf(w6);
          const float w9 = 1.0f / w7;
          const float w10 = w0 * w9;
          const float w11 = in3[j];
          const float w12 = w10 * w11;
          out0[i0 * 128 + j] = w12;
        }
      }
    }
  }
}
