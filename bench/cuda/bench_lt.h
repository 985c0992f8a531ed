#pragma once
// Shared by the standalone cuBLASLt measurements in bench/cuda: the fastest of the heuristic's
// candidates (at most 16) for one product description.
#include <cublasLt.h>

#include <cstdint>

#include "bench_check.h"

// Microseconds of the fastest candidate for D = op(A) op(B) as `op` and the layouts describe it (C is D),
// or -1 when the heuristic offers none. `reductions`, when not 0, restricts split-K's reduction schemes.
inline float fastest_candidate_us(cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
                                  cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld, const float* a, const float* b,
                                  float* d, void* workspace, size_t workspace_bytes, uint32_t reductions = 0) {
  cublasLtMatmulPreference_t pref;
  CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                  sizeof(workspace_bytes)));
  if (reductions != 0) {
    CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions,
                                                    sizeof(reductions)));
  }
  cublasLtMatmulHeuristicResult_t results[16];
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, ld, ld, pref, 16, results, &found);
  float best = -1.f;
  const float alpha = 1.f, beta = 0.f;
  for (int r = 0; status == CUBLAS_STATUS_SUCCESS && r < found; ++r) {
    const float us = time_us([&] {
      CHECK_BLAS(cublasLtMatmul(h, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &results[r].algo, workspace,
                                workspace_bytes, 0));
    });
    best = best < 0 || us < best ? us : best;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  return best;
}
