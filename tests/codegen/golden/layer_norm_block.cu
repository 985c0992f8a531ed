typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

// layer_norm_block
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in4 = (const float*)in_[4];
  const float* in5 = (const float*)in_[5];
  float* out0 = (float*)out_[0];
  __shared__ double tsr_sh0[8];
  __shared__ double tsr_sh1[8];
  const int64_t tsr_l = ((int64_t)threadIdx.x);
  for (int64_t o = begin + ((int64_t)blockIdx.x); o < end; o += ((int64_t)gridDim.x)) {
    const int64_t i0 = o;
    double a0 = 0.0;
    double a1 = 0.0;
    for (int64_t r = tsr_l; r < 4096; r += 256) {
      const int64_t j = r;
      const float v0 = in0[i0 * 4096 + j];
      const double v1 = (double)v0;
      a0 += v1;
    }
    a0 += __shfl_xor_sync(0xffffffffu, a0, 16);
    a0 += __shfl_xor_sync(0xffffffffu, a0, 8);
    a0 += __shfl_xor_sync(0xffffffffu, a0, 4);
    a0 += __shfl_xor_sync(0xffffffffu, a0, 2);
    a0 += __shfl_xor_sync(0xffffffffu, a0, 1);
    if (tsr_l % 32 == 0) {
      tsr_sh0[tsr_l / 32] = a0;
    }
    __syncthreads();
    if (tsr_l < 32) {
      a0 = tsr_l < 8 ? tsr_sh0[tsr_l] : 0.0;
      a0 += __shfl_xor_sync(0xffffffffu, a0, 16);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 8);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 4);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 2);
      a0 += __shfl_xor_sync(0xffffffffu, a0, 1);
    }
    if (tsr_l == 0) {
      tsr_sh0[0] = a0;
    }
    __syncthreads();
    a0 = tsr_sh0[0];
    for (int64_t r = tsr_l; r < 4096; r += 256) {
      const int64_t j = r;
      const float c0 = in0[i0 * 4096 + j];
      const double c1 = a0;
      const float c2 = (float)c1;
      const float c4 = c2 * 0.00024414062f;
      const float c5 = c0 - c4;
      const float c6 = c5 * c5;
      const double c7 = (double)c6;
      a1 += c7;
    }
    a1 += __shfl_xor_sync(0xffffffffu, a1, 16);
    a1 += __shfl_xor_sync(0xffffffffu, a1, 8);
    a1 += __shfl_xor_sync(0xffffffffu, a1, 4);
    a1 += __shfl_xor_sync(0xffffffffu, a1, 2);
    a1 += __shfl_xor_sync(0xffffffffu, a1, 1);
    if (tsr_l % 32 == 0) {
      tsr_sh1[tsr_l / 32] = a1;
    }
    __syncthreads();
    if (tsr_l < 32) {
      a1 = tsr_l < 8 ? tsr_sh1[tsr_l] : 0.0;
      a1 += __shfl_xor_sync(0xffffffffu, a1, 16);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 8);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 4);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 2);
      a1 += __shfl_xor_sync(0xffffffffu, a1, 1);
    }
    if (tsr_l == 0) {
      tsr_sh1[0] = a1;
    }
    __syncthreads();
    a1 = tsr_sh1[0];
    for (int64_t r = tsr_l; r < 4096; r += 256) {
      const int64_t j = r;
      const float w0 = in0[i0 * 4096 + j];
      const double w1 = a0;
      const float w2 = (float)w1;
      const float w4 = w2 * 0.00024414062f;
      const float w5 = w0 - w4;
      const double w6 = a1;
      const float w7 = (float)w6;
      const float w8 = w7 * 0.00024414062f;
      const float w10 = w8 + 1e-05f;
      const float w11 = sqrtf(w10);
      const float w13 = 1.0f / w11;
      const float w14 = w5 * w13;
      const float w15 = in4[j];
      const float w16 = w14 * w15;
      const float w17 = in5[j];
      const float w18 = w16 + w17;
      out0[i0 * 4096 + j] = w18;
    }
    __syncthreads();
  }
}
