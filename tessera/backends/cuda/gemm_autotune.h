#pragma once
// Choosing a cuBLASLt algorithm by measurement. The heuristic's first answer is sometimes far off for
// thin products (an H200 spent 245 us on a 4096x10x256 TF32 product and 1.4 ms on a 256x128x1600 f32
// one with it), so every candidate it offers is timed once on scratch memory and the fastest kept.
// Choices are remembered per product in the process and in the kernel cache folder (keyed by the
// product, cuBLASLt's version and the device), so a later compile reads them back instead of timing.
#include <cublasLt.h>

#include <string>
#include <vector>

#include "tessera/backends/cuda/gemm.h"

namespace tessera::backends::cuda {

struct GemmProblem {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;  // cuBLASLt's operands (swapped)
  const GemmShape* shape = nullptr;
  std::string key;  // everything that decides which algorithms are valid and fast
};

// The candidate to use; candidates holds the heuristic's results, best first (at least one).
cublasLtMatmulAlgo_t choose_gemm_algo(const GemmProblem& problem,
                                      const std::vector<cublasLtMatmulHeuristicResult_t>& candidates);

}  // namespace tessera::backends::cuda
