typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// half_load_store
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const __half* in0 = (const __half*)in_[0];
  const __nv_bfloat16* in1 = (const __nv_bfloat16*)in_[1];
  __half* out0 = (__half*)out_[0];
  __nv_bfloat16* out1 = (__nv_bfloat16*)out_[1];
  for (int64_t u = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); u < end; u += ((int64_t)gridDim.x * blockDim.x)) {
    const int64_t j = u;
    const __half v0 = in0[j];
    const float v1 = __half2float(v0);
    const float v2 = expm1f(v1);
    const __half v3 = __float2half_rn(v2);
    const float v4 = __half2float(v3);
    const __nv_bfloat16 v5 = __float2bfloat16_rn(v4);
    const __nv_bfloat16 v6 = in1[j];
    const float v7 = __bfloat162float(v5);
    const float v8 = __bfloat162float(v6);
    const float v9 = v7 * v8;
    const __nv_bfloat16 v10 = __float2bfloat16_rn(v9);
    out1[j] = v10;
    out0[j] = v3;
  }
}
