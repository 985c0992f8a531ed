#pragma once
// f32 products of few rows (or a short inner dimension) on the CUDA cores, split over K. cuBLASLt's f32
// kernels tile 128 or more rows, so a product of 64 rows fills a handful of the 132 multiprocessors:
// 64x1024x784 took 23 us (3.4 TFLOP/s), and such products were most of the batch-64 MLP training step.
// Here each block takes a 64x64 tile of the result over one slice of K; the slices' partial sums go to
// the context's workspace and a second kernel adds them in slice order (deterministic: a resumed
// training run stays bit-identical) with the fused tail: + bias, + residual, ReLU or tanh-GELU.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tessera/backends/cuda/context.h"
#include "tessera/backends/cuda/gemm.h"

namespace tessera::backends::cuda {

// Whether products of this shape take the SIMT kernel: TESSERA_CUDA_SIMT_GEMM=0 never, =1 for every f32
// product it can run (single matrices, no TF32), otherwise (or set_simt_gemm) by the measured rule.
bool simt_gemm_suits(const GemmShape& shape, int multiprocessors);
// -1: the rule (default), 0: never, 1: whenever possible (tests and measurements).
void set_simt_gemm(int mode);

class SimtGemm {
 public:
  SimtGemm(Context& ctx, const GemmShape& shape);
  // A product whose operands are read through macros instead of as matrices: `operands` defines TSR_A_T,
  // TSR_B_T, TSR_A(row, k), TSR_B(k, col), TSR_D(row, col) and TSR_BIAS(row, col) (simt_gemm.cpp's core
  // says what each means; conv_gemm.cpp is the user). Of `shape` only m, n, k, bias, residual and
  // activation count. `label` is what describe() says.
  SimtGemm(Context& ctx, const GemmShape& shape, const std::string& operands, std::string label);
  // D = op(A) op(B) (+ bias) (+ C) (activation); the pointers as GemmPlan::run takes them.
  void run(const void* a, const void* b, const void* bias, const void* c, void* d, cudaStream_t stream) const;
  std::string describe() const;
  const GemmShape& shape() const { return shape_; }

 private:
  GemmShape shape_;
  std::string label_;
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_ = nullptr, reduce_kernel_ = nullptr;
  int tile_m_ = 64;  // rows of the result per block: 64, or 32 for products of at most 32 rows
  int splits_ = 1;
  bool reduce_warps_ = false;  // the partials added by a warp per output (many splits)
  int64_t k_chunk_ = 0;
  float* partials_ = nullptr;  // the context's workspace: splits_ x m x n floats
  int multiprocessors_ = 1;
};

}  // namespace tessera::backends::cuda
