#include "tessera/backends/common/conv_geometry.h"

#include "tessera/core/error.h"

namespace tessera::backends::common {

kernels::Conv2dGeometry conv2d_geometry(const ir::Node& node, const Shape& x, const Shape& w, const Shape& y) {
  const ir::Attrs& a = node.attrs();
  kernels::Conv2dGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.in_h = x[2];
  g.in_w = x[3];
  g.out_channels = w[0];
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  g.out_h = y[2];
  g.out_w = y[3];
  g.stride_h = a.get_ints("stride")[0];
  g.stride_w = a.get_ints("stride")[1];
  g.pad_h = a.get_ints("padding")[0];
  g.pad_w = a.get_ints("padding")[1];
  g.dilation_h = a.get_ints("dilation")[0];
  g.dilation_w = a.get_ints("dilation")[1];
  g.groups = a.get_int("groups");
  return g;
}

std::optional<kernels::Conv2dGeometry> f32_conv2d_geometry(const ir::Node& node) {
  if (node.num_outputs() != 1 || node.inputs().size() < 2) return std::nullopt;
  for (const ir::Value& v : node.inputs()) {
    if (v.dtype() != DType::f32) return std::nullopt;
  }
  if (node.input(0).rank() != 4 || node.input(1).rank() != 4 || node.output_types()[0].dtype != DType::f32) {
    return std::nullopt;
  }
  const Shape& in0 = node.input(0).shape();
  const Shape& in1 = node.input(1).shape();
  const Shape& out = node.output_types()[0].shape;
  const std::string& op = node.op_name();
  kernels::Conv2dGeometry g;
  if (op == "conv") {
    g = conv2d_geometry(node, in0, in1, out);
  } else if (op == "conv_input_grad") {
    g = conv2d_geometry(node, out, in1, in0);  // (grad_out, weight) -> grad_in
  } else if (op == "conv_weight_grad") {
    g = conv2d_geometry(node, in0, out, in1);  // (x, grad_out) -> grad_weight
  } else {
    return std::nullopt;
  }
  try {
    kernels::check_conv2d_geometry(g, op.c_str());
  } catch (const Error&) {
    return std::nullopt;
  }
  return g;
}

kernels::Pool2dGeometry pool2d_geometry(const ir::Attrs& a, const Shape& x, const Shape& y) {
  kernels::Pool2dGeometry g;
  const size_t r = x.size();
  g.planes = 1;
  for (size_t d = 0; d + 2 < r; ++d) g.planes *= x[d];
  g.in_h = x[r - 2];
  g.in_w = x[r - 1];
  g.out_h = y[r - 2];
  g.out_w = y[r - 1];
  g.kernel_h = a.get_ints("kernel")[0];
  g.kernel_w = a.get_ints("kernel")[1];
  g.stride_h = a.get_ints("stride")[0];
  g.stride_w = a.get_ints("stride")[1];
  g.pad_h = a.get_ints("padding")[0];
  g.pad_w = a.get_ints("padding")[1];
  if (a.has("dilation")) {
    g.dilation_h = a.get_ints("dilation")[0];
    g.dilation_w = a.get_ints("dilation")[1];
  }
  g.ceil_mode = a.get_bool_or("ceil_mode", false);
  return g;
}

}  // namespace tessera::backends::common
