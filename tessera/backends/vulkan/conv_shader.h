#pragma once
// 2-D f32 convolutions and their two gradients as implicit GEMMs on the tiled product shader
// (matmul_shader.h): the product's loads read each tap of the input (or of the output gradient)
// straight from its NCHW tensor, with the geometry compiled in as constants, where the decomposition
// (ops/conv_decompose.cpp) gathered an im2col matrix, copied it into a product's layout and scattered
// the input gradient back (a dozen dispatches for one layer's three products). The products' sides:
// common/conv_geometry.h. Bindings A (the node's second input), B (its first), D, then the forward
// pass's bias [Cout] and residual (laid out as Y); push words as the matmul shader's.
#include <string>

#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/vulkan/quant_shader.h"

namespace tessera::backends::vulkan {

/// The GLSL of one convolution product with R = `block` and the forward pass's `tail` (+ bias per
/// output channel, ReLU or tanh-GELU, + a residual). A weight gradient with `k_split` > 0 sums K range
/// [z k_split, (z + 1) k_split) in workgroup z into the z-th [Cout, Cin*kh*kw] partial of D
/// (conv_split_sum_glsl adds them).
std::string conv_product_glsl(common::ConvProduct kind, const kernels::Conv2dGeometry& g, int block, int k_split,
                              const MatvecTail& tail = {});

/// d[i] = sum over s < splits of p[s * count + i], the splits added in order (deterministic): bindings
/// p, d; push words count, splits, then the two binding shifts.
std::string conv_split_sum_glsl();
inline constexpr int kSplitSumShiftWord = 2;

}  // namespace tessera::backends::vulkan
