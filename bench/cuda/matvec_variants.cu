// Which launch design streams 16-bit weight rows fastest in a decode matvec (y = W x, W bf16 [n, k],
// x and y f32) at the Llama-1B decode shapes: a standalone sweep for the GPU machine, built there with
// `nvcc -O3 -arch=sm_90 bench/cuda/matvec_variants.cu -o /tmp/matvec_variants` (scripts/device/cuda_suite.sh
// stage `matvecbench`). Each variant is checked against a one-thread-per-row reference and timed over
// copies of W that together exceed the L2 cache four times (a decode step reads every weight once), beside
// a kernel that only reads the same bytes (the ceiling at that size).
//   kernel<ROWS_PER_WARP, WARPS_PER_ROW, UNROLL, X_IN_SHARED, WARPS>: a group of WARPS_PER_ROW warps takes
//   ROWS_PER_WARP rows; lane l of part p reads 16-byte chunks p*32 + l, stepping 32 * WARPS_PER_ROW,
//   UNROLL chunks of every row in flight; x is read from shared memory (staged once per block) or
//   through the read-only cache.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_check.h"

__device__ __forceinline__ float bf(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }

__device__ __forceinline__ float dot8(uint4 w, const float* xs) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < 4; ++j) s += bf(words[j] & 0xFFFF) * xs[2 * j] + bf(words[j] >> 16) * xs[2 * j + 1];
  return s;
}

template <int RPW, int WPR, int UNROLL, bool XSMEM, int WARPS>
__global__ void __launch_bounds__(WARPS * 32) matvec(const uint4* __restrict__ w, const float* __restrict__ x,
                                                      float* __restrict__ y, int n, int k) {
  extern __shared__ float xs_shared[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, part = warp % WPR;
  if (XSMEM) {
    for (int i = threadIdx.x * 4; i < k; i += WARPS * 32 * 4) *(float4*)(xs_shared + i) = __ldg((const float4*)(x + i));
    __syncthreads();
  }
  const float* xv = XSMEM ? xs_shared : x;
  const int j0 = (blockIdx.x * (WARPS / WPR) + warp / WPR) * RPW;
  const int chunks = k / 8, stride = 32 * WPR;
  float acc[RPW];
#pragma unroll
  for (int t = 0; t < RPW; ++t) acc[t] = 0.0f;
  const uint4* rows[RPW];
#pragma unroll
  for (int t = 0; t < RPW; ++t) rows[t] = w + (size_t)min(j0 + t, n - 1) * chunks;
  if (j0 < n) {
    for (int c = part * 32 + lane; c < chunks; c += UNROLL * stride) {
      uint4 v[UNROLL][RPW];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
        for (int t = 0; t < RPW; ++t) {
          const int cc = c + u * stride;
          v[u][t] = cc < chunks ? __ldg(rows[t] + cc) : make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int cc = c + u * stride;
        if (cc >= chunks) break;
        float xr[8];
        const float4 a = XSMEM ? *(const float4*)(xv + 8 * cc) : __ldg((const float4*)(xv + 8 * cc));
        const float4 b = XSMEM ? *(const float4*)(xv + 8 * cc + 4) : __ldg((const float4*)(xv + 8 * cc + 4));
        xr[0] = a.x, xr[1] = a.y, xr[2] = a.z, xr[3] = a.w, xr[4] = b.x, xr[5] = b.y, xr[6] = b.z, xr[7] = b.w;
#pragma unroll
        for (int t = 0; t < RPW; ++t) acc[t] += dot8(v[u][t], xr);
      }
    }
  }
#pragma unroll
  for (int t = 0; t < RPW; ++t) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc[t] += __shfl_xor_sync(0xffffffffu, acc[t], o);
  }
  if (WPR == 1) {
    if (lane < RPW && j0 + lane < n) {
      float out = 0.0f;
#pragma unroll
      for (int t = 0; t < RPW; ++t) out = lane == t ? acc[t] : out;
      y[j0 + lane] = out;
    }
    return;
  }
  __shared__ float partial[WARPS][RPW];
  if (lane == 0) {
#pragma unroll
    for (int t = 0; t < RPW; ++t) partial[warp][t] = acc[t];
  }
  __syncthreads();
  if (part == 0 && lane < RPW && j0 + lane < n) {
    float total = 0.0f;
    for (int p = 0; p < WPR; ++p) total += partial[warp + p][lane];
    y[j0 + lane] = total;
  }
}

__global__ void read_only(const uint4* __restrict__ w, size_t chunks, float* sink) {
  unsigned acc = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < chunks; i += (size_t)gridDim.x * blockDim.x) {
    const uint4 v = __ldg(w + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = 1.0f;
}

__global__ void reference(const unsigned short* w, const float* x, float* y, int n, int k) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  double s = 0.0;
  for (int i = 0; i < k; ++i) s += (double)bf(w[(size_t)j * k + i]) * x[i];
  y[j] = (float)s;
}

struct Variant {
  std::string name;
  void (*launch)(const uint4*, const float*, float*, int, int, cudaStream_t);
};

template <int RPW, int WPR, int UNROLL, bool XSMEM, int WARPS>
void launch(const uint4* w, const float* x, float* y, int n, int k, cudaStream_t s) {
  const int rows_per_block = WARPS / WPR * RPW;
  const size_t shared = XSMEM ? k * sizeof(float) : 0;
  matvec<RPW, WPR, UNROLL, XSMEM, WARPS><<<(n + rows_per_block - 1) / rows_per_block, WARPS * 32, shared, s>>>(w, x, y, n, k);
}

#define V(R, W, U, S, N) \
  Variant{std::string("rpw" #R " wpr" #W " unroll" #U) + (S ? " xshared" : " xldg") + " warps" #N, launch<R, W, U, S, N>}

int main() {
  const std::vector<Variant> variants = {
      V(1, 1, 8, false, 8), V(1, 1, 8, true, 8),  V(2, 1, 4, false, 8), V(2, 1, 4, true, 8),
      V(2, 2, 4, false, 8), V(2, 2, 4, true, 8),  V(4, 1, 2, true, 8),  V(4, 1, 4, true, 8),
      V(1, 1, 4, true, 4),  V(1, 1, 8, true, 4),  V(2, 1, 4, true, 4),  V(1, 2, 8, true, 8),
      V(1, 4, 4, true, 8),  V(2, 4, 4, true, 8),  V(1, 1, 16, true, 8), V(4, 2, 2, true, 8),
  };
  struct Shape {
    const char* what;
    int n, k;
  };
  const std::vector<Shape> shapes = {{"gate+up 16384x2048", 16384, 2048}, {"down 2048x8192", 2048, 8192},
                                     {"qkv 3072x2048", 3072, 2048},       {"o 2048x2048", 2048, 2048},
                                     {"lm_head 32000x2048", 32000, 2048}};
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  for (const Shape& sh : shapes) {
    const size_t bytes = (size_t)sh.n * sh.k * 2;
    const int copies = (int)std::max<size_t>(2, (size_t)(240u << 20) / bytes + 1);
    std::vector<unsigned short> host((size_t)sh.n * sh.k);
    uint32_t seed = 12345;
    for (auto& h : host) {
      seed = seed * 1664525u + 1013904223u;
      const float f = ((seed >> 8) * (1.0f / 16777216.0f) - 0.5f) * 0.1f;
      h = (unsigned short)(__builtin_bit_cast(uint32_t, f) >> 16);
    }
    std::vector<float> xh(sh.k);
    for (auto& v : xh) {
      seed = seed * 1664525u + 1013904223u;
      v = (seed >> 8) * (1.0f / 16777216.0f) - 0.5f;
    }
    uint4* w = nullptr;
    float *x = nullptr, *y = nullptr, *want = nullptr;
    CHECK(cudaMalloc(&w, bytes * copies));
    for (int c = 0; c < copies; ++c) CHECK(cudaMemcpy((char*)w + bytes * c, host.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&x, sh.k * 4));
    CHECK(cudaMalloc(&y, sh.n * 4));
    CHECK(cudaMalloc(&want, sh.n * 4));
    CHECK(cudaMemcpy(x, xh.data(), sh.k * 4, cudaMemcpyHostToDevice));
    reference<<<(sh.n + 127) / 128, 128>>>((const unsigned short*)w, x, want, sh.n, sh.k);
    std::vector<float> ref(sh.n), got(sh.n);
    CHECK(cudaMemcpy(ref.data(), want, sh.n * 4, cudaMemcpyDeviceToHost));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    auto time = [&](auto&& body) {
      std::vector<float> samples;
      for (int rep = 0; rep < 7; ++rep) {
        const int launches = 20 * copies;
        CHECK(cudaEventRecord(a, stream));
        for (int i = 0; i < launches; ++i) body(i % copies);
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        samples.push_back(ms * 1000.0f / launches);
      }
      std::sort(samples.begin(), samples.end());
      return samples[samples.size() / 2];
    };
    const float ceiling = time([&](int c) {
      read_only<<<sms * 8, 256, 0, stream>>>((const uint4*)((const char*)w + bytes * c), bytes / 16, y);
    });
    std::printf("%s (%d copies): read-only %.2f us = %.2f TB/s\n", sh.what, copies, ceiling, bytes / ceiling / 1e6);
    for (const Variant& v : variants) {
      if (v.name.find("xshared") != std::string::npos && sh.k * 4 > 48 * 1024) continue;
      CHECK(cudaMemset(y, 0, sh.n * 4));
      v.launch(w, x, y, sh.n, sh.k, stream);
      CHECK(cudaStreamSynchronize(stream));
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(got.data(), y, sh.n * 4, cudaMemcpyDeviceToHost));
      double err = 0;
      for (int j = 0; j < sh.n; ++j) err = std::max(err, (double)std::fabs(got[j] - ref[j]));
      const float us = time([&](int c) { v.launch((const uint4*)((const char*)w + bytes * c), x, y, sh.n, sh.k, stream); });
      std::printf("  %-36s %7.2f us  %5.2f TB/s  %3.0f%% of read-only  max|err| %.1e\n", v.name.c_str(), us,
                  bytes / us / 1e6, 100.0 * ceiling / us, err);
    }
    CHECK(cudaFree(w));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(want));
  }
  return 0;
}
