#pragma once
// Shared by the standalone GPU measurements in bench/cuda (built with nvcc on the GPU machine): exit with
// the failing call's text on any CUDA or cuBLAS error, and time a launch sequence over 50 runs after a
// warm-up of 5.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// For cuBLAS and cuBLASLt calls (both return cublasStatus_t).
#define CHECK_BLAS(x)                                                                  \
  do {                                                                                 \
    const int s_ = static_cast<int>(x);                                                \
    if (s_ != 0) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, s_); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// Microseconds per call of f on the default stream: 5 warm-up calls, then the mean of 50.
inline float time_us(const std::function<void()>& f) {
  for (int i = 0; i < 5; ++i) f();
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a));
  for (int i = 0; i < 50; ++i) f();
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return ms * 1000.f / 50.f;
}
