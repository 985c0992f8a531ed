#pragma once
// 2-D f32 convolutions as an explicit im2col matrix and one cuBLASLt product (plain f32, no TF32), for
// convolutions with many channels on both sides. The implicit GEMM (conv_gemm.h) gathers every tap while
// it multiplies and spends more instructions on the index arithmetic than on the multiply-adds; copying
// the taps out once and handing cuBLASLt plain matrices was faster on the H200 for the CNN's second
// convolution (n256, 32->64, 13x13, 3x3: cuBLAS 31 us forward, 43 us input gradient against 70 and 129
// for the implicit kernels; bench/cuda/conv_gemm_shapes.cu; the whole CNN step 468 -> 376 us). The
// weight gradient stays implicit by default: its im2col and reordering cost what its product saves. With
// the columns C [Cin*kh*kw, N*OH*OW] and T an operand in channel-major order [channels, N*plane]:
//   forward      T = W @ C, then Y (NCHW) = activation(T + bias + residual) as it is transposed back
//   input_grad   T = dY in channel-major order, C = W^T @ T, then dX = the taps of C added back (a gather)
//   weight_grad  T = dY in channel-major order, C = im2col(X), dW = T @ C^T
// Each is one step of a few launches with the two matrices in the step's scratch memory.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tessera/backends/cuda/conv_gemm.h"
#include "tessera/backends/cuda/gemm.h"

namespace tessera::backends::cuda {

// Whether this convolution product takes the explicit form: the forward pass or the input gradient, every
// side of its product at least 32 and the columns within 256 MiB (the rule). TESSERA_CUDA_CONV_IM2COL=0
// never, =1 whenever the geometry allows, or a list of forward, input_grad and weight_grad joined by '+'
// or ',': those products whenever allowed.
bool im2col_conv_suits(ConvProduct kind, const kernels::Conv2dGeometry& g);
// -1: the rule or the environment (default), 0: never, 1: whenever the geometry allows (tests).
void set_conv_im2col(int mode);

class Im2colConv {
 public:
  // a_aligned / d_aligned: whether the step's a and d operands start 16-byte aligned (cuBLASLt's kernels
  // may rely on it).
  Im2colConv(Context& ctx, ConvProduct kind, const kernels::Conv2dGeometry& g, const ConvTail& tail, bool a_aligned,
             bool d_aligned);
  ~Im2colConv();
  Im2colConv(const Im2colConv&) = delete;
  Im2colConv& operator=(const Im2colConv&) = delete;
  int64_t columns_bytes() const;     // the scratch for C
  int64_t transposed_bytes() const;  // the scratch for T
  // The operands as make_conv_gemm's run takes them (a = W or dY, b = X or dY), plus the two scratch areas.
  void run(const void* a, const void* b, const void* bias, const void* residual, void* d, void* columns,
           void* transposed, cudaStream_t stream) const;
  std::string describe() const;

 private:
  ConvProduct kind_;
  kernels::Conv2dGeometry g_;
  ConvTail tail_;
  std::shared_ptr<KernelModule> module_;
  // The launches around the product: im2col (forward, weight grad), dY to channel-major order (the two
  // gradients) before it, the tail's reordering or the col2im gather (forward, input grad) after it.
  cudaKernel_t im2col_ = nullptr, to_channel_major_ = nullptr, finish_ = nullptr;
  std::unique_ptr<GemmPlan> product_;
  int multiprocessors_ = 1;
  std::string label_;
};

}  // namespace tessera::backends::cuda
