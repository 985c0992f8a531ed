// Whether a decode step's weights, fetched into L2 while the step's short kernels run (norms, RoPE,
// attention: they leave the memory system idle), make the next matvec faster. A standalone measurement
// for the GPU machine (scripts/device/cuda_suite.sh stage `prefetch`), at the Llama-1B decode shapes:
//   cold      the matvec alone, its weights not in L2 (copies of W rotated, together > 4x the L2)
//   warm      the same right after a kernel prefetched its first `window` bytes into L2
//   layer     six short kernels then the matvec, as one CUDA graph: serial, and with the prefetch on a
//             forked branch beside the short kernels (joined before the matvec)
// Measured on the H200 (2026-12-05): a matvec whose weights were prefetched runs 20-35% faster alone
// (gate+up 24.7 -> 19.2 us, o 11.1 -> 7.2 us), but a prefetch forked beside the short kernels gained
// nothing in the layer sequence (49.7 against 49.3-50.2 us) nor in the backend's decode (tried as
// backends/cuda/l2_prefetch.*, 1 round: Llama-1B bf16 899 -> 853 / 810 tok/s): not kept.
// Prefetch forms: `prefetch.global.L2::evict_last` per 128-byte line over many threads, or Hopper's
// `cp.async.bulk.prefetch.L2` in 16 KB requests from 32 blocks of 32 threads.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench_check.h"

__device__ __forceinline__ float bf(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }

// y = W x for bf16 W [n, k]: a warp per two rows, 16-byte chunks, four in flight per row (the launch
// shape the backend's matvec picks for these sizes).
__global__ void __launch_bounds__(256) matvec(const uint4* __restrict__ w, const float* __restrict__ x,
                                              float* __restrict__ y, int n, int k) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int j0 = (blockIdx.x * 8 + warp) * 2;
  if (j0 >= n) return;
  const int chunks = k / 8;
  const uint4* rows[2] = {w + (size_t)j0 * chunks, w + (size_t)min(j0 + 1, n - 1) * chunks};
  float acc[2] = {0.0f, 0.0f};
  for (int c = lane; c < chunks; c += 4 * 32) {
    uint4 v[4][2];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
#pragma unroll
      for (int t = 0; t < 2; ++t) v[u][t] = c + 32 * u < chunks ? __ldg(rows[t] + c + 32 * u) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int cc = c + 32 * u;
      if (cc >= chunks) break;
      const float4 a = __ldg((const float4*)(x + 8 * cc)), b = __ldg((const float4*)(x + 8 * cc + 4));
      const float xr[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        const unsigned words[4] = {v[u][t].x, v[u][t].y, v[u][t].z, v[u][t].w};
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[t] += bf(words[q] & 0xFFFF) * xr[2 * q] + bf(words[q] >> 16) * xr[2 * q + 1];
      }
    }
  }
#pragma unroll
  for (int t = 0; t < 2; ++t) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc[t] += __shfl_xor_sync(0xffffffffu, acc[t], o);
  }
  if (lane < 2 && j0 + lane < n) y[j0 + lane] = acc[lane];
}

// A stand-in for a decode step's short kernels: one block that spins for about `spin` iterations.
__global__ void short_kernel(float* sink, int spin) {
  float v = threadIdx.x;
  for (int i = 0; i < spin; ++i) v = v * 0.999f + 1.0f;
  if (v == -1.0f) sink[0] = v;
}

__global__ void prefetch_lines(const char* p, size_t bytes) {
  for (size_t o = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 128; o < bytes; o += (size_t)gridDim.x * blockDim.x * 128) {
    asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p + o));
  }
}

__global__ void prefetch_bulk(const char* p, size_t bytes) {
  constexpr size_t kRequest = 16 << 10;
  for (size_t o = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * kRequest; o < bytes;
       o += (size_t)gridDim.x * blockDim.x * kRequest) {
    const unsigned size = (unsigned)(bytes - o < kRequest ? bytes - o : kRequest) & ~15u;
    if (size) asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p + o), "r"(size) : "memory");
  }
}

enum class Prefetch { none, lines, bulk };

void prefetch(Prefetch how, const void* p, size_t bytes, int sms, cudaStream_t s) {
  if (how == Prefetch::lines) prefetch_lines<<<sms, 256, 0, s>>>((const char*)p, bytes);
  if (how == Prefetch::bulk) prefetch_bulk<<<32, 32, 0, s>>>((const char*)p, bytes);
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  int sms = 0, l2 = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  std::printf("%d multiprocessors, L2 %d MiB\n", sms, l2 >> 20);
  struct Shape {
    const char* what;
    int n, k;
  };
  const std::vector<Shape> shapes = {{"gate+up 16384x2048", 16384, 2048},
                                     {"down 2048x8192", 2048, 8192},
                                     {"qkv 3072x2048", 3072, 2048},
                                     {"o 2048x2048", 2048, 2048}};
  cudaStream_t stream, side;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t a, b, fork, join;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  float* sink = nullptr;
  CHECK(cudaMalloc(&sink, 4));
  for (const Shape& sh : shapes) {
    const size_t bytes = (size_t)sh.n * sh.k * 2;
    const int copies = (int)std::max<size_t>(3, (size_t)(4 * (size_t)l2) / bytes + 1);
    char* w = nullptr;
    float *x = nullptr, *y = nullptr;
    CHECK(cudaMalloc(&w, bytes * copies));
    CHECK(cudaMemset(w, 0x3c, bytes * copies));
    CHECK(cudaMalloc(&x, sh.k * 4));
    CHECK(cudaMalloc(&y, sh.n * 4));
    CHECK(cudaMemset(x, 0, sh.k * 4));
    const size_t window = std::min(bytes, (size_t)l2 * 3 / 4);
    auto run_matvec = [&](int c) {
      matvec<<<(sh.n + 15) / 16, 256, 0, stream>>>((const uint4*)(w + bytes * c), x, y, sh.n, sh.k);
    };
    // The matvec alone, after an optional prefetch of its weights (not timed).
    auto alone = [&](Prefetch how) {
      std::vector<float> samples;
      for (int rep = 0; rep < 9 * copies; ++rep) {
        const int c = rep % copies;
        prefetch(how, w + bytes * c, window, sms, stream);
        CHECK(cudaEventRecord(a, stream));
        run_matvec(c);
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        samples.push_back(ms * 1000.0f);
      }
      return median(samples);
    };
    const float cold = alone(Prefetch::none), lines = alone(Prefetch::lines), bulk = alone(Prefetch::bulk);
    std::printf("%s, %.1f MB, window %.1f MB: matvec cold %.2f us (%.2f TB/s), after line prefetch %.2f us, after bulk "
                "prefetch %.2f us\n",
                sh.what, bytes / 1e6, window / 1e6, cold, bytes / cold / 1e6, lines, bulk);
    // Six short kernels and the matvec per copy of W, captured once over every copy and replayed.
    for (int spin : {2000, 8000}) {
      for (Prefetch how : {Prefetch::none, Prefetch::lines, Prefetch::bulk}) {
        cudaGraph_t graph;
        CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int c = 0; c < copies; ++c) {
          if (how != Prefetch::none) {
            CHECK(cudaEventRecord(fork, stream));
            CHECK(cudaStreamWaitEvent(side, fork));
            prefetch(how, w + bytes * c, window, how == Prefetch::lines ? std::max(1, sms / 8) : sms, side);
            CHECK(cudaEventRecord(join, side));
          }
          for (int i = 0; i < 6; ++i) short_kernel<<<1, 64, 0, stream>>>(sink, spin);
          if (how != Prefetch::none) CHECK(cudaStreamWaitEvent(stream, join));
          run_matvec(c);
        }
        CHECK(cudaStreamEndCapture(stream, &graph));
        cudaGraphExec_t exec;
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        std::vector<float> samples;
        for (int rep = 0; rep < 9; ++rep) {
          CHECK(cudaEventRecord(a, stream));
          CHECK(cudaGraphLaunch(exec, stream));
          CHECK(cudaEventRecord(b, stream));
          CHECK(cudaEventSynchronize(b));
          float ms = 0;
          CHECK(cudaEventElapsedTime(&ms, a, b));
          samples.push_back(ms * 1000.0f / copies);
        }
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(graph));
        std::printf("  layer (6 short kernels of %d spins + matvec), prefetch %s: %.2f us\n", spin,
                    how == Prefetch::none ? "none " : how == Prefetch::lines ? "lines" : "bulk ", median(samples));
      }
    }
    CHECK(cudaGetLastError());
    CHECK(cudaFree(w));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
  }
  // The short kernels alone, for scale.
  for (int spin : {2000, 8000}) {
    const float us = time_us([&] { short_kernel<<<1, 64>>>(sink, spin); });
    std::printf("short kernel of %d spins alone: %.2f us\n", spin, us);
  }
  return 0;
}
