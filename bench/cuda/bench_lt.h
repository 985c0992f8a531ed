#pragma once
// Shared by the standalone cuBLASLt measurements in bench/cuda: the fastest of the heuristic's
// candidates (at most 16) for one product description.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "bench_check.h"

// A cuBLASLt handle and the 32 MiB workspace every measurement gives its products.
struct Lt {
  cublasLtHandle_t handle;
  size_t workspace_bytes = size_t{32} << 20;
  void* workspace = nullptr;
  Lt() {
    CHECK_BLAS(cublasLtCreate(&handle));
    CHECK(cudaMalloc(&workspace, workspace_bytes));
  }
};

// Microseconds of the fastest candidate for D = op(A) op(B) as `op` and the layouts describe it (C is D),
// or -1 when the heuristic offers none. `reductions`, when not 0, restricts split-K's reduction schemes.
inline float fastest_candidate_us(const Lt& lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
                                  cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld, const float* a, const float* b,
                                  float* d, uint32_t reductions = 0) {
  cublasLtMatmulPreference_t pref;
  CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &lt.workspace_bytes, sizeof(lt.workspace_bytes)));
  if (reductions != 0) {
    CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions,
                                                    sizeof(reductions)));
  }
  cublasLtMatmulHeuristicResult_t results[16];
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt.handle, op, la, lb, ld, ld, pref, 16, results, &found);
  float best = -1.f;
  const float alpha = 1.f, beta = 0.f;
  for (int r = 0; status == CUBLAS_STATUS_SUCCESS && r < found; ++r) {
    const float us = time_us([&] {
      CHECK_BLAS(cublasLtMatmul(lt.handle, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &results[r].algo,
                                lt.workspace, lt.workspace_bytes, 0));
    });
    best = best < 0 || us < best ? us : best;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  return best;
}
