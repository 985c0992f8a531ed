typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// shift_by_max_block
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  __shared__ float tsr_sh0[8];
  __shared__ int tsr_shn0[8];
  const int64_t tsr_l = ((int64_t)threadIdx.x);
  for (int64_t o = begin + ((int64_t)blockIdx.x); o < end; o += ((int64_t)gridDim.x)) {
    const int64_t i0 = o;
    float a0 = (-__int_as_float(0x7f800000));
    int n0 = 0;
    for (int64_t r = tsr_l; r < 4096; r += 256) {
      const int64_t j = r;
      const float v0 = in0[i0 * 4096 + j];
      a0 = v0 > a0 ? v0 : a0;
      n0 |= v0 != v0;
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
    if (tsr_l % 32 == 0) {
      tsr_sh0[tsr_l / 32] = a0;
      tsr_shn0[tsr_l / 32] = n0;
    }
    __syncthreads();
    if (tsr_l < 32) {
      a0 = tsr_l < 8 ? tsr_sh0[tsr_l] : (-__int_as_float(0x7f800000));
      n0 = tsr_l < 8 ? tsr_shn0[tsr_l] : 0;
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
    }
    if (tsr_l == 0) {
      tsr_sh0[0] = a0;
      tsr_shn0[0] = n0;
    }
    __syncthreads();
    a0 = tsr_sh0[0];
    n0 = tsr_shn0[0];
    for (int64_t r = tsr_l; r < 4096; r += 256) {
      const int64_t j = r;
      const float w0 = in0[i0 * 4096 + j];
      const float w1 = (n0 ? __int_as_float(0x7fc00000) : a0);
      const float w2 = w0 - w1;
      const float w3 = expf(w2);
      out0[i0 * 4096 + j] = w3;
    }
    __syncthreads();
  }
}
