typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
template <typename T, int N> struct alignas(sizeof(T) * N) tsr_vec { T v[N]; };

// relu_axpb
extern "C" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {
  const float* in0 = (const float*)in_[0];
  const float* in2 = (const float*)in_[2];
  float* out0 = (float*)out_[0];
  const bool tsr_vectors = ((((unsigned long long)(in0)) & 15) | (((unsigned long long)(in2)) & 15) | (((unsigned long long)(out0)) & 15)) == 0;
  if (tsr_vectors) {
    for (int64_t u0 = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 4; u0 < end; u0 += ((int64_t)gridDim.x * blockDim.x) * 8) {
      tsr_vec<float, 4> L0[2];
      tsr_vec<float, 4> L3[2];
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const int64_t u = u0 + q * ((int64_t)gridDim.x * blockDim.x) * 4;
        if (u < end) {
          uint32_t rem = (uint32_t)u;
          const int64_t j = rem % (uint32_t)8;
          rem /= (uint32_t)8;
          const int64_t i0 = rem;
          L0[q] = *(const tsr_vec<float, 4>*)(in0 + (i0 * 8 + j));
          L3[q] = *(const tsr_vec<float, 4>*)(in2 + (j));
        }
      }
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const int64_t u = u0 + q * ((int64_t)gridDim.x * blockDim.x) * 4;
        if (u < end) {
          uint32_t rem = (uint32_t)u;
          const int64_t j = rem % (uint32_t)8;
          rem /= (uint32_t)8;
          const int64_t i0 = rem;
          tsr_vec<float, 4> S0;
          const float v0_0 = L0[q].v[0];
          const float v2_0 = v0_0 * 2.0f;
          const float v3_0 = L3[q].v[0];
          const float v4_0 = v2_0 + v3_0;
          const bool v6_0 = (v4_0 < 0.0f);
          const float v7_0 = (v6_0 ? 0.0f : v4_0);
          S0.v[0] = v7_0;
          const float v0_1 = L0[q].v[1];
          const float v2_1 = v0_1 * 2.0f;
          const float v3_1 = L3[q].v[1];
          const float v4_1 = v2_1 + v3_1;
          const bool v6_1 = (v4_1 < 0.0f);
          const float v7_1 = (v6_1 ? 0.0f : v4_1);
          S0.v[1] = v7_1;
          const float v0_2 = L0[q].v[2];
          const float v2_2 = v0_2 * 2.0f;
          const float v3_2 = L3[q].v[2];
          const float v4_2 = v2_2 + v3_2;
          const bool v6_2 = (v4_2 < 0.0f);
          const float v7_2 = (v6_2 ? 0.0f : v4_2);
          S0.v[2] = v7_2;
          const float v0_3 = L0[q].v[3];
          const float v2_3 = v0_3 * 2.0f;
          const float v3_3 = L3[q].v[3];
          const float v4_3 = v2_3 + v3_3;
          const bool v6_3 = (v4_3 < 0.0f);
          const float v7_3 = (v6_3 ? 0.0f : v4_3);
          S0.v[3] = v7_3;
          *(tsr_vec<float, 4>*)(out0 + (i0 * 8 + j)) = S0;
        }
      }
    }
  }
  else {
    for (int64_t u = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); u < end; u += ((int64_t)gridDim.x * blockDim.x)) {
      uint32_t rem = (uint32_t)u;
      const int64_t j = rem % (uint32_t)8;
      rem /= (uint32_t)8;
      const int64_t i0 = rem;
      const float v0 = in0[i0 * 8 + j];
      const float v2 = v0 * 2.0f;
      const float v3 = in2[j];
      const float v4 = v2 + v3;
      const bool v6 = (v4 < 0.0f);
      const float v7 = (v6 ? 0.0f : v4);
      out0[i0 * 8 + j] = v7;
    }
  }
}
