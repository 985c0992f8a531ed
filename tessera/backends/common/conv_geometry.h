#pragma once
// The 2-D convolution geometry of a conv / conv_input_grad / conv_weight_grad node and the 2-D pooling
// geometry of a pooling node, shared by the backends that run them as library steps (the CPU's kernels,
// CUDA's implicit GEMMs and pooling kernels).
#include <optional>

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

// A pooling node's geometry from its input-side shape `x` and pooled shape `y` (both [..., H, W]; the
// leading axes are planes) and its kernel/stride/padding/dilation/ceil_mode attributes.
kernels::Pool2dGeometry pool2d_geometry(const ir::Attrs& a, const Shape& x, const Shape& y);

}  // namespace tessera::backends::common
