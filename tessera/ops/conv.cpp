// The functional API of convolution, pooling and resampling. The ops themselves live in
// conv_kernels.cpp (conv and its gradients), conv_pool.cpp and conv_upsample.cpp; this file maps the
// PyTorch-style 1-d/2-d signatures onto them and checks what only the API level knows (ranks, the
// transposed convolution's parameters).
#include "tessera/ops/conv.h"

#include <cmath>

#include "tessera/ir/op_def.h"
#include "tessera/ops/conv_util.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;

std::vector<TensorType> conv_operand_types(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  std::vector<TensorType> types = {x.type(), weight.type()};
  if (bias.defined()) types.push_back(bias.type());
  return types;
}

std::vector<int64_t> vec(std::array<int64_t, 2> a) {
  return {a[0], a[1]};
}

Attrs conv_attrs(const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                 const std::vector<int64_t>& dilation, int64_t groups) {
  return Attrs{{"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"groups", groups}};
}

void require_rank(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t rank,
                  const char* layout) {
  if (x.rank() != rank || weight.rank() != rank) {
    ir::op_fail(op, conv_operand_types(x, weight, bias), "expected {}, got ranks {} and {}", layout, x.rank(), weight.rank());
  }
}

std::string mode_name(UpsampleMode mode) {
  switch (mode) {
    case UpsampleMode::Nearest:
      return "nearest";
    case UpsampleMode::NearestExact:
      return "nearest-exact";
    case UpsampleMode::Bilinear:
      return "linear";
  }
  return "nearest";
}

// Pooling stride: {0, 0} means "the kernel size".
std::vector<int64_t> pool_stride(std::array<int64_t, 2> stride, std::array<int64_t, 2> kernel) {
  return stride[0] == 0 && stride[1] == 0 ? vec(kernel) : vec(stride);
}
}  // namespace

Tensor conv(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::vector<int64_t>& stride,
            const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
  std::vector<ir::Value> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return ir::make_node1("conv", std::move(inputs), conv_attrs(stride, padding, dilation, groups));
}

Tensor conv_input_grad(const Tensor& grad_out, const Tensor& weight, const Shape& input_spatial,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                       const std::vector<int64_t>& dilation, int64_t groups) {
  return ir::make_node1("conv_input_grad", {grad_out, weight},
                        conv_attrs(stride, padding, dilation, groups).set("input_size", input_spatial));
}

Tensor conv_weight_grad(const Tensor& x, const Tensor& grad_out, const Shape& kernel_spatial,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                        const std::vector<int64_t>& dilation, int64_t groups) {
  return ir::make_node1("conv_weight_grad", {x, grad_out},
                        conv_attrs(stride, padding, dilation, groups).set("kernel_size", kernel_spatial));
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  require_rank("conv1d", x, weight, bias, 3, "a 3-D input [N, Cin, L] and a 3-D weight [Cout, Cin/groups, K]");
  return conv(x, weight, bias, {stride}, {padding}, {dilation}, groups);
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::array<int64_t, 2> stride,
              std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, int64_t groups) {
  require_rank("conv2d", x, weight, bias, 4, "a 4-D input [N, Cin, H, W] and a 4-D weight [Cout, Cin/groups, kH, kW]");
  return conv(x, weight, bias, vec(stride), vec(padding), vec(dilation), groups);
}

// The transposed convolution is the input gradient of the convolution it transposes: that convolution
// maps [N, Cout, *out] to [N, Cin, *in] with weight [Cin, Cout/groups, *k], PyTorch's transposed layout.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::array<int64_t, 2> stride,
                        std::array<int64_t, 2> padding, std::array<int64_t, 2> output_padding,
                        std::array<int64_t, 2> dilation, int64_t groups) {
  const char* op = "conv_transpose2d";
  const std::vector<TensorType> types = conv_operand_types(x, weight, bias);
  require_rank(op, x, weight, bias, 4, "a 4-D input [N, Cin, H, W] and a 4-D weight [Cin, Cout/groups, kH, kW]");
  if (groups < 1) ir::op_fail(op, types, "groups must be positive, got {}", groups);
  for (size_t i = 0; i < 2; ++i) {
    if (stride[i] < 1) ir::op_fail(op, types, "stride must be positive, got {}", shape_str(vec(stride)));
    if (dilation[i] < 1) ir::op_fail(op, types, "dilation must be positive, got {}", shape_str(vec(dilation)));
    if (padding[i] < 0) ir::op_fail(op, types, "padding must be non-negative, got {}", shape_str(vec(padding)));
    if (output_padding[i] < 0 || (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])) {
      ir::op_fail(op, types, "output_padding {} must be non-negative and smaller than stride {} or dilation {}",
                  shape_str(vec(output_padding)), shape_str(vec(stride)), shape_str(vec(dilation)));
    }
  }
  const int64_t in_ch = x.dim(1);
  if (weight.dim(0) != in_ch) {
    ir::op_fail(op, types, "input has {} channels but weight {} expects weight.shape[0] = {}", in_ch,
                shape_str(weight.shape()), weight.dim(0));
  }
  if (in_ch % groups != 0) ir::op_fail(op, types, "groups {} does not divide the {} input channels", groups, in_ch);
  const int64_t out_ch = weight.dim(1) * groups;
  Shape out_spatial;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t size = (x.shape()[i + 2] - 1) * stride[i] - 2 * padding[i] +
                         dilation[i] * (weight.shape()[i + 2] - 1) + output_padding[i] + 1;
    if (size < 1) ir::op_fail(op, types, "the output size along spatial axis {} would be {}, expected >= 1", i, size);
    out_spatial.push_back(size);
  }
  Tensor y = conv_input_grad(x, weight, out_spatial, vec(stride), vec(padding), vec(dilation), groups);
  if (!bias.defined()) return y;
  if (bias.shape() != Shape{out_ch} || bias.dtype() != x.dtype()) {
    ir::op_fail(op, types, "bias must be {}[{}] (one per output channel)", dtype_name(x.dtype()), out_ch);
  }
  return y + reshape(bias, {1, out_ch, 1, 1});
}

namespace {
// ceil_mode is set only when on, so floor-mode graphs print and hash as before the attribute existed.
Attrs with_ceil_mode(Attrs a, bool ceil_mode) {
  if (ceil_mode) a.set("ceil_mode", true);
  return a;
}
}  // namespace

Tensor max_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                  std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, bool ceil_mode) {
  return ir::make_node1("max_pool", {x},
                        with_ceil_mode(Attrs{{"kernel", vec(kernel)},
                                             {"stride", pool_stride(stride, kernel)},
                                             {"padding", vec(padding)},
                                             {"dilation", vec(dilation)}},
                                       ceil_mode));
}

Tensor avg_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                  std::array<int64_t, 2> padding, bool count_include_pad, bool ceil_mode) {
  return ir::make_node1("avg_pool", {x},
                        with_ceil_mode(Attrs{{"kernel", vec(kernel)},
                                             {"stride", pool_stride(stride, kernel)},
                                             {"padding", vec(padding)},
                                             {"count_include_pad", count_include_pad}},
                                       ceil_mode));
}

Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> output_size) {
  return ir::make_node1("adaptive_avg_pool", {x}, Attrs{{"output_size", vec(output_size)}});
}

Tensor upsample2d(const Tensor& x, std::array<int64_t, 2> size, UpsampleMode mode, bool align_corners) {
  return ir::make_node1("upsample", {x},
                        Attrs{{"size", vec(size)}, {"mode", mode_name(mode)}, {"align_corners", align_corners}});
}

Tensor upsample2d_scaled(const Tensor& x, std::array<double, 2> scale_factors, UpsampleMode mode, bool align_corners) {
  const char* op = "upsample2d_scaled";
  if (x.rank() < 2) ir::op_fail(op, {x.type()}, "expected an input of rank >= 2 ([..., H, W])");
  std::vector<int64_t> size;
  for (size_t i = 0; i < 2; ++i) {
    const double f = scale_factors[i];
    if (!(std::isfinite(f) && f > 0.0)) {
      ir::op_fail(op, {x.type()}, "scale factors must be positive and finite, got ({}, {})", scale_factors[0],
                  scale_factors[1]);
    }
    // PyTorch: floor(float(in) * scale) in double.
    const double out = std::floor(static_cast<double>(x.dim(static_cast<int64_t>(i) - 2)) * f);
    if (!(out >= 1.0 && out < 9.0e15)) {
      ir::op_fail(op, {x.type()}, "scale factor {} gives {} output elements along spatial axis {}, expected >= 1", f,
                  out, i);
    }
    size.push_back(static_cast<int64_t>(out));
  }
  Attrs attrs{{"size", size}, {"mode", mode_name(mode)}, {"align_corners", align_corners}};
  // align_corners maps corners by size alone (PyTorch ignores the factors there too).
  if (!align_corners) attrs.set("scales", std::vector<double>{scale_factors[0], scale_factors[1]});
  return ir::make_node1("upsample", {x}, std::move(attrs));
}

Tensor upsample2d(const Tensor& x, double scale_factor, UpsampleMode mode, bool align_corners) {
  return upsample2d_scaled(x, {scale_factor, scale_factor}, mode, align_corners);
}

void register_conv_ops(ir::OpRegistry& r) {
  conv_detail::register_conv_kernel_ops(r);
  conv_detail::register_pool_ops(r);
  conv_detail::register_upsample_ops(r);
}

}  // namespace tessera::ops
