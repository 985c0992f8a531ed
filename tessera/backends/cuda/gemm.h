#pragma once
// Matrix products through cuBLASLt, in row-major terms: D[b] = A[b] (m x k) * B[b] (k x n) (+ bias[n])
// (activation) (+ C[b]). cuBLASLt is column-major, so the product is computed as D^T = B^T A^T with
// the operands swapped; a transposed operand is a stored transpose (the graph's permute of the last
// two axes), read with op T instead of being copied. A plan (descriptors and the chosen algorithm) is
// made once at compile time; run() only launches, so it can be captured in a CUDA graph.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tessera/core/dtype.h"

namespace tessera::backends::cuda {

enum class GemmActivation { none, relu, gelu };

struct GemmShape {
  DType dtype = DType::f32;  // of A, B, C, D and the bias; f32, f16 or bf16
  bool f32_output = false;   // C, D and the bias in f32 whatever A and B are (f16/bf16 inputs)
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_transposed = false;  // A is stored as [k, m]
  bool b_transposed = false;  // B is stored as [n, k]
  int64_t lda = 0, ldb = 0, ldd = 0;                // row strides of the stored matrices (elements)
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;  // batch strides (0: the operand is shared)
  bool bias = false;
  bool residual = false;  // C, laid out as D
  GemmActivation activation = GemmActivation::none;
  bool tf32 = false;  // f32 inputs through TF32 tensor cores (10-bit mantissas)
  // The alignment in bytes every run's A, B and D addresses are known to have (cuBLASLt picks
  // kernels that rely on it).
  int align_a = 16, align_b = 16, align_d = 16;
};

class GemmPlan {
 public:
  GemmPlan(cublasLtHandle_t handle, const GemmShape& shape, void* workspace, size_t workspace_bytes);
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;
  void run(const void* a, const void* b, const void* bias, const void* c, void* d, cudaStream_t stream) const;
  std::string describe() const;
  const GemmShape& shape() const { return shape_; }

 private:
  cublasLtHandle_t handle_;
  GemmShape shape_;
  void* workspace_;
  size_t workspace_bytes_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;  // cuBLASLt's operands
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace tessera::backends::cuda
