typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// total_max_block
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  float* out0 = (float*)out_[0];
  unsigned char* tsr_scratch = (unsigned char*)out_[1];
  __shared__ float tsr_sh0[8];
  __shared__ int tsr_shn0[8];
  __shared__ int tsr_last[1];
  volatile float* tsr_part0 = (volatile float*)(tsr_scratch + 0);
  volatile int* tsr_partn0 = (volatile int*)(tsr_scratch + 16);
  unsigned int* tsr_count = (unsigned int*)(tsr_scratch + 32);
  const int64_t tsr_l = ((int64_t)threadIdx.x);
  for (int64_t ob = begin * 2 + ((int64_t)blockIdx.x); ob < end * 2; ob += ((int64_t)gridDim.x)) {
    const int64_t o = ob / 2, tsr_s = ob % 2;
    float a0 = (-__int_as_float(0x7f800000));
    int n0 = 0;
    const int64_t tsr_end = tsr_s * 4096 + 4096 < 8192 ? tsr_s * 4096 + 4096 : 8192;
    for (int64_t r = tsr_s * 4096 + tsr_l; r < tsr_end; r += 256) {
      const int64_t j = r;
      const float v0 = in0[j];
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
      tsr_part0[o * 2 + tsr_s] = a0;
      tsr_partn0[o * 2 + tsr_s] = n0;
      __threadfence();
      tsr_last[0] = atomicAdd((unsigned int*)(tsr_count + o), 1u) == 1u;
    }
    __syncthreads();
    if (tsr_last[0] && tsr_l == 0) {
      __threadfence();
      a0 = (-__int_as_float(0x7f800000));
      n0 = 0;
      for (int q = 0; q < 2; ++q) {
        { const float t = tsr_part0[o * 2 + q]; a0 = t > a0 ? t : a0; }
        n0 |= tsr_partn0[o * 2 + q];
      }
      tsr_count[o] = 0u;  // ready for the next run
      const float e0 = (n0 ? __int_as_float(0x7fc00000) : a0);
      const float e2 = e0 + 1.0f;
      out0[0] = e2;
    }
    __syncthreads();
  }
}
