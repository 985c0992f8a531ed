#pragma once
// f32 products of few rows (or a short inner dimension) on the CUDA cores, split over K. cuBLASLt's f32
// kernels tile 128 or more rows, so a product of 64 rows fills a handful of the 132 multiprocessors:
// 64x1024x784 took 23 us (3.4 TFLOP/s), and such products were most of the batch-64 MLP training step.
// Here each block takes a 64x64 tile of the result over one slice of K; the slices' partial sums go to
// the context's workspace and a second kernel adds them in slice order (deterministic: a resumed
// training run stays bit-identical) with the fused tail: + bias, + residual, ReLU or tanh-GELU.
// Two shapes get kernels of their own: a short sum into many columns (a thread per column) and a long
// sum into at most 16 columns (a thread per K run with every column's sum in registers); the same tiles
// also run on the tensor cores in 3xTF32 (f32 accuracy) when forced to (SimtKernel::mma).
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

// Which kernel a product on this path takes. automatic: the rule (the short-K or narrow kernel where the
// shape suits, else the SIMT tiles); simt and mma force the SIMT or the 3xTF32 tensor-core tiles for
// every product (tests, measurements). TESSERA_CUDA_SIMT_KERNEL=simt|mma. The tensor-core tiles are not
// the rule's: on the CNN step's convolutions they measured 1% slower than the SIMT tiles, whose time
// goes to gathering the taps rather than to the multiply-adds.
enum class SimtKernel { automatic, simt, mma };
void set_simt_kernel(SimtKernel choice);

// The fused tails' activation as device code, tsr_activation(v, code), for every kernel that applies
// one, and the code of each activation (0 none, 1 ReLU, 2 tanh-GELU).
extern const char* const kTailActivation;
int activation_code(GemmActivation a);

class SimtGemm {
 public:
  SimtGemm(Context& ctx, const GemmShape& shape);
  // A product whose operands are read through macros instead of as matrices: `operands` defines TSR_A_T,
  // TSR_B_T, TSR_A(row, k), TSR_B(k, col), TSR_D(row, col) and TSR_BIAS(row, col) (simt_gemm.cpp's core
  // says what each means; conv_gemm.cpp is the user). Of `shape` only m, n, k, bias, residual and
  // activation count. `label` is what describe() says; `gathered_operands`: the macros gather (a
  // convolution's taps), which wants more blocks per multiprocessor in flight.
  SimtGemm(Context& ctx, const GemmShape& shape, const std::string& operands, std::string label,
           bool gathered_operands);
  // D = op(A) op(B) (+ bias) (+ C) (activation); the pointers as GemmPlan::run takes them.
  void run(const void* a, const void* b, const void* bias, const void* c, void* d, cudaStream_t stream) const;
  std::string describe() const;
  const GemmShape& shape() const { return shape_; }

 private:
  enum class Variant { simt, mma, short_k, narrow };
  GemmShape shape_;
  std::string label_;
  Variant variant_ = Variant::simt;
  dim3 grid_;
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_ = nullptr, reduce_kernel_ = nullptr;
  int tile_m_ = 64;  // rows of the result per block: 64, or 32 for products of at most 32 rows
  int splits_ = 1;
  int cluster_ = 0;  // the splits added inside a thread-block cluster (no second launch), or 0
  bool reduce_warps_ = false;  // the partials added by a warp per output (many splits)
  int64_t k_chunk_ = 0;
  float* partials_ = nullptr;  // the context's workspace: splits_ x m x n floats
  int multiprocessors_ = 1;
};

}  // namespace tessera::backends::cuda
