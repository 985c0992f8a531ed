typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// softmax_lanes
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  {
    const int64_t tsr_t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x);
    const int64_t tsr_lane = tsr_t % 32;
    for (int64_t ow = begin + tsr_t / 32 * 1; ow < end; ow += ((int64_t)gridDim.x * blockDim.x) / 32) {
      const int64_t o = ow + tsr_t % 32 / 32;
      const bool tsr_live = o < end;
      const int64_t i0 = o;
      float a0 = (-__int_as_float(0x7f800000));
      int n0 = 0;
      double a1 = 0.0;
      if (tsr_live) {
        for (int64_t r = tsr_lane; r < 256; r += 32) {
          const int64_t j = r;
          const float v0 = in0[i0 * 256 + j];
          a0 = v0 > a0 ? v0 : a0;
          n0 |= v0 != v0;
        }
      }
      { const float t = __shfl_xor_sync(0xffffffffu, a0, 16); a0 = t > a0 ? t : a0; }
      n0 |= __shfl_xor_sync(0xffffffffu, n0, 16);
      { const float t = __shfl_xor_sync(0xffffffffu, a0, 8); a0 = t > a0 ? t : a0; }
      n0 |= __shfl_xor_sync(0xffffffffu, n0, 8);
      { const float t = __shfl_xor_sync(0xffffffffu, a0, 4); a0 = t > a0 ? t : a0; }
      n0 |= __shfl_xor_sync(0xffffffffu, n0, 4);
      { const float t = __shfl_xor_sync(0xffffffffu, a0, 2); a0 = t > a0 ? t : a0; }
      n0 |= __shfl_xor_sync(0xffffffffu, n0, 2);
      { const float t = __shfl_xor_sync(0xffffffffu, a0, 1); a0 = t > a0 ? t : a0; }
      n0 |= __shfl_xor_sync(0xffffffffu, n0, 1);
      if (tsr_live) {
        for (int64_t r = tsr_lane; r < 256; r += 32) {
          const int64_t j = r;
          const float c0 = in0[i0 * 256 + j];
          const float c1 = (n0 ? __int_as_float(0x7fc00000) : a0);
          const float c2 = c0 - c1;
          const float c3 = expf(c2);
          const double c4 = (double)c3;
          a1 += c4;
        }
      }
      a1 += __shfl_xor_sync(0xffffffffu, a1, 16);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 8);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 4);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 2);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 1);
      if (tsr_live) {
        for (int64_t r = tsr_lane; r < 256; r += 32) {
          const int64_t j = r;
          const float w0 = in0[i0 * 256 + j];
          const float w1 = (n0 ? __int_as_float(0x7fc00000) : a0);
          const float w2 = w0 - w1;
          const float w3 = expf(w2);
          const double w4 = a1;
          const float w5 = (float)w4;
          const float w6 = w3 / w5;
          out0[i0 * 256 + j] = w6;
        }
      }
    }
  }
}
