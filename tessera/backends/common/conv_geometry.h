#pragma once
// The 2-D convolution geometry of a conv / conv_input_grad / conv_weight_grad node and the 2-D pooling
// geometry of a pooling node, shared by the backends that run them as library steps (the CPU's kernels,
// CUDA's implicit GEMMs and pooling kernels).
#include <optional>
#include <string>

#include "tessera/ir/graph.h"
#include "tessera/kernels/cpu/conv.h"
#include "tessera/kernels/cpu/pool.h"

namespace tessera::backends::common {

// The geometry of a node whose input, weight and output extents are x, w and y (NCHW, OIHW); they come
// from different operands of the three ops.
kernels::Conv2dGeometry conv2d_geometry(const ir::Node& node, const Shape& x, const Shape& w, const Shape& y);

// The geometry of a conv, conv_input_grad or conv_weight_grad node whose operands are all f32 and
// 4-D, or nothing (other ops, dtypes or ranks, or a geometry check_conv2d_geometry refuses).
std::optional<kernels::Conv2dGeometry> f32_conv2d_geometry(const ir::Node& node);

// The three convolution products as implicit GEMMs (CUDA's conv_gemm.h, Vulkan's conv_shader.h):
//   forward      Y [N, Cout, OH, OW]  = W [Cout, Cin*kh*kw] @ taps(X) [Cin*kh*kw, N*OH*OW]
//   input_grad   dX [N, Cin, H, W]    = W^T [Cin, Cout*kh*kw] @ taps(dY) [Cout*kh*kw, N*H*W]
//   weight_grad  dW [Cout, Cin*kh*kw] = dY [Cout, N*OH*OW] @ taps(X)^T
// The product's A is the node's second input and B its first in all three.
enum class ConvProduct { forward, input_grad, weight_grad };
// The product of a conv, conv_input_grad or conv_weight_grad node.
ConvProduct conv_product_of(const ir::Node& node);
// "conv", "conv input grad" or "conv weight grad", as step descriptions name them.
const char* conv_product_name(ConvProduct kind);
// "n256 32->64 13x13 k3x3 s1x1 p0x0 d1x1": batch, channels, input size, kernel, stride, padding,
// dilation, as step descriptions give them.
std::string conv_geometry_description(const kernels::Conv2dGeometry& g);
struct GemmSides {
  int64_t m = 0, n = 0, k = 0;
};
GemmSides implicit_gemm_sides(ConvProduct kind, const kernels::Conv2dGeometry& g);
// Whether every index an implicit GEMM forms (tensor elements, GEMM rows and columns) fits 31 bits.
bool implicit_gemm_indices_fit(const kernels::Conv2dGeometry& g);
// The geometry as preprocessor constants for generated kernels (C-family dialects: CUDA, GLSL):
// CV_CIN, CV_H, CV_W, CV_COUT, CV_KH, CV_KW, CV_OH, CV_OW, CV_SH, CV_SW, CV_DH, CV_DW unsigned,
// CV_PH, CV_PW signed.
std::string conv_geometry_defines(const kernels::Conv2dGeometry& g);

// A pooling node's geometry from its input-side shape `x` and pooled shape `y` (both [..., H, W]; the
// leading axes are planes) and its kernel/stride/padding/dilation/ceil_mode attributes.
kernels::Pool2dGeometry pool2d_geometry(const ir::Attrs& a, const Shape& x, const Shape& y);

// The 2-D f32 pooling geometry of a max_pool or max_pool_grad node (x is input 0 of both; the pooled
// shape is max_pool's output and max_pool_grad's second input) over any leading axes (planes), with
// a plane's indices inside 31 bits; nothing for other dtypes, ranks or empty tensors.
std::optional<kernels::Pool2dGeometry> f32_max_pool2d_geometry(const ir::Node& node);
// Whether the windows tile the input (kernel = stride, no dilation or padding): each input element in
// at most one window, so a gradient can be written a window's cell at a time.
bool pool_windows_tile(const kernels::Pool2dGeometry& g);
// The geometry as preprocessor constants for generated kernels: PL_H, PL_W, PL_OH, PL_OW, PL_KH, PL_KW,
// PL_SH, PL_SW, PL_PH, PL_PW, PL_DH, PL_DW (signed).
std::string pool_geometry_defines(const kernels::Pool2dGeometry& g);

}  // namespace tessera::backends::common
