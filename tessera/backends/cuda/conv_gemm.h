#pragma once
// 2-D convolutions and their two gradients as implicit GEMMs on the SIMT product kernel (simt_gemm.h):
// the product reads each tap of the input (or of the output gradient) straight from its NCHW tensor
// while loading a K slice, where the decomposition (ops/conv_decompose.cpp) first copies every tap
// into an im2col matrix and scatters the input gradient back from one. With the geometry compiled in
// as constants, the tap arithmetic is divisions by constants. One group only; f32. A convolution with
// at most 32 taps per output (one to three input channels of a 3x3 kernel) and at most 64 output
// channels runs forward on the short-K kernel (a thread per output position, every channel), and one
// whose weight gradient has at most 16 columns (one channel of 3x3) on the narrow kernel (simt_gemm.h).
//   forward      Y [N, Cout, OH, OW] = W [Cout, Cin*kh*kw] @ taps(X) [Cin*kh*kw, N*OH*OW] (+ bias per Cout)
//   input_grad   dX [N, Cin, H, W]   = W^T [Cin, Cout*kh*kw] @ taps(dY) [Cout*kh*kw, N*H*W]
//   weight_grad  dW [Cout, Cin*kh*kw] = dY [Cout, N*OH*OW] @ taps(X)^T, K split over the GPU
#include <memory>

#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/cuda/simt_gemm.h"
#include "tessera/kernels/cpu/conv.h"

namespace tessera::backends::cuda {

using common::ConvProduct;
using common::conv_geometry_defines;

// The tap readers over the geometry's #defines (common::conv_geometry_defines), for the kernels built
// on it: tsr_conv_tap(x, k, j) (the input element column j of the im2col matrix holds at row k, zero
// in the padding) and tsr_conv_back_tap(dy, k, j) (the output-gradient element input position j receives
// from tap k, zero where none).
extern const char* const kConvTaps;

// Whether the implicit GEMM computes this geometry: one group, every index within 31 bits.
// TESSERA_CUDA_CONV_GEMM=0 turns it off (the convolutions then decompose into im2col and products).
bool conv_gemm_suits(const kernels::Conv2dGeometry& g);

// The forward pass's fused tail: activation(v + bias [Cout] + residual laid out as Y).
struct ConvTail {
  bool bias = false, residual = false;
  GemmActivation activation = GemmActivation::none;
};

// "conv input grad n256 32->64 13x13 k3x3 s1x1 p0x0 d1x1 +bias relu": the product's name and geometry
// (common/conv_geometry.h) and the tail, as both convolution paths describe their steps.
std::string conv_description(ConvProduct kind, const kernels::Conv2dGeometry& g, const ConvTail& tail);

// The product for one of the three; its run(a, b, bias, residual, d, stream) takes
//   forward: a = W, b = X (and the tail's operands)    input_grad: a = W, b = dY    weight_grad: a = dY, b = X.
std::unique_ptr<SimtGemm> make_conv_gemm(Context& ctx, ConvProduct kind, const kernels::Conv2dGeometry& g,
                                         const ConvTail& tail = {});

}  // namespace tessera::backends::cuda
