#pragma once
// Single-precision GEMM for the CPU backend, row-major:
//   C[m, n] = alpha * op(A)[m, k] · op(B)[k, n] + beta * C, then the epilogue (bias, activation,
//   residual) applied while the tile is still in registers/cache.
// Two providers behind one call: Tessera's own packed AVX2/FMA kernel (portable fallback without
// AVX2) and OpenBLAS when built with it. TESSERA_GEMM=tessera|openblas picks at run time.
#include <cstdint>
#include <string>

#include "tessera/kernels/activation.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

struct GemmEpilogue {
  const float* bias = nullptr;      // length n, added to every row
  Activation activation = Activation::none;
  const float* residual = nullptr;  // m x n (row stride ldr), added after the activation
  int64_t ldr = 0;
  Activation post_activation = Activation::none;  // applied last, to the sum with the residual
};

enum class GemmProvider { tessera, openblas };

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmEpilogue& epilogue = {},
           runtime::ThreadPool* pool = nullptr /* default_pool() */);

// Double precision (tests and f64 graphs); plain blocked loops, multithreaded.
void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc, runtime::ThreadPool* pool = nullptr);

bool openblas_available();
GemmProvider gemm_provider();
void set_gemm_provider(GemmProvider provider);  // throws if openblas is asked for but not built in
std::string gemm_provider_name();

}  // namespace tessera::kernels
