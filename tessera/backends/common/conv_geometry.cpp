#include "tessera/backends/common/conv_geometry.h"

#include <algorithm>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::backends::common {

namespace {

// A two-int attribute (height, width) into its two fields.
void read_pair(const ir::Attrs& a, const char* name, int64_t& h, int64_t& w) {
  const std::vector<int64_t>& v = a.get_ints(name);
  h = v[0];
  w = v[1];
}

}  // namespace

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
  read_pair(a, "stride", g.stride_h, g.stride_w);
  read_pair(a, "padding", g.pad_h, g.pad_w);
  read_pair(a, "dilation", g.dilation_h, g.dilation_w);
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
  read_pair(a, "kernel", g.kernel_h, g.kernel_w);
  read_pair(a, "stride", g.stride_h, g.stride_w);
  read_pair(a, "padding", g.pad_h, g.pad_w);
  if (a.has("dilation")) read_pair(a, "dilation", g.dilation_h, g.dilation_w);
  g.ceil_mode = a.get_bool_or("ceil_mode", false);
  return g;
}

ConvProduct conv_product_of(const ir::Node& node) {
  const std::string& op = node.op_name();
  if (op == "conv") return ConvProduct::forward;
  if (op == "conv_input_grad") return ConvProduct::input_grad;
  TESSERA_CHECK(op == "conv_weight_grad", "conv_product_of: '{}' is not a convolution product", op);
  return ConvProduct::weight_grad;
}

const char* conv_product_name(ConvProduct kind) {
  switch (kind) {
    case ConvProduct::forward:
      return "conv";
    case ConvProduct::input_grad:
      return "conv input grad";
    case ConvProduct::weight_grad:
      break;
  }
  return "conv weight grad";
}

std::string conv_geometry_description(const kernels::Conv2dGeometry& g) {
  return fmt::format("n{} {}->{} {}x{} k{}x{} s{}x{} p{}x{} d{}x{}", g.batch, g.in_channels, g.out_channels, g.in_h,
                     g.in_w, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h,
                     g.dilation_w);
}

GemmSides implicit_gemm_sides(ConvProduct kind, const kernels::Conv2dGeometry& g) {
  const int64_t taps = g.kernel_h * g.kernel_w;
  switch (kind) {
    case ConvProduct::forward:
      return {g.out_channels, g.batch * g.out_h * g.out_w, g.in_channels * taps};
    case ConvProduct::input_grad:
      return {g.in_channels, g.batch * g.in_h * g.in_w, g.out_channels * taps};
    case ConvProduct::weight_grad:
      break;
  }
  return {g.out_channels, g.in_channels * taps, g.batch * g.out_h * g.out_w};
}

bool implicit_gemm_indices_fit(const kernels::Conv2dGeometry& g) {
  const int64_t taps = g.in_channels * g.kernel_h * g.kernel_w;
  const int64_t limit = int64_t{1} << 31;
  const int64_t largest = std::max<int64_t>(
      {g.batch * g.in_channels * g.in_h * g.in_w, g.batch * g.out_channels * g.out_h * g.out_w, g.out_channels * taps});
  return largest > 0 && largest < limit && g.batch * g.in_h * g.in_w < limit && g.batch * g.out_h * g.out_w < limit;
}

std::string conv_geometry_defines(const kernels::Conv2dGeometry& g) {
  return fmt::format(
      "#define CV_CIN {}u\n#define CV_H {}u\n#define CV_W {}u\n#define CV_COUT {}u\n#define CV_KH {}u\n"
      "#define CV_KW {}u\n#define CV_OH {}u\n#define CV_OW {}u\n#define CV_SH {}u\n#define CV_SW {}u\n"
      "#define CV_PH {}\n#define CV_PW {}\n#define CV_DH {}u\n#define CV_DW {}u\n",
      g.in_channels, g.in_h, g.in_w, g.out_channels, g.kernel_h, g.kernel_w, g.out_h, g.out_w, g.stride_h, g.stride_w,
      g.pad_h, g.pad_w, g.dilation_h, g.dilation_w);
}

std::optional<kernels::Pool2dGeometry> f32_max_pool2d_geometry(const ir::Node& node) {
  const std::string& op = node.op_name();
  if ((op != "max_pool" && op != "max_pool_grad") || node.num_outputs() != 1) return std::nullopt;
  const ir::Attrs& a = node.attrs();
  if (!a.has("kernel") || a.get_ints("kernel").size() != 2) return std::nullopt;
  for (const ir::Value& v : node.inputs()) {
    if (v.dtype() != DType::f32) return std::nullopt;
  }
  if (node.output_types()[0].dtype != DType::f32) return std::nullopt;
  const Shape& x = node.input(0).shape();
  if (x.size() < 3) return std::nullopt;
  const Shape& pooled = op == "max_pool_grad" ? node.input(1).shape() : node.output_types()[0].shape;
  const kernels::Pool2dGeometry g = pool2d_geometry(a, x, pooled);
  if (g.planes * g.in_h * g.in_w == 0 || g.out_h * g.out_w == 0 || g.in_h * g.in_w >= (int64_t{1} << 31)) {
    return std::nullopt;
  }
  return g;
}

bool pool_windows_tile(const kernels::Pool2dGeometry& g) {
  return g.kernel_h == g.stride_h && g.kernel_w == g.stride_w && g.dilation_h == 1 && g.dilation_w == 1 &&
         g.pad_h == 0 && g.pad_w == 0;
}

std::string pool_geometry_defines(const kernels::Pool2dGeometry& g) {
  return fmt::format(
      "#define PL_H {}\n#define PL_W {}\n#define PL_OH {}\n#define PL_OW {}\n#define PL_KH {}\n#define PL_KW {}\n"
      "#define PL_SH {}\n#define PL_SW {}\n#define PL_PH {}\n#define PL_PW {}\n#define PL_DH {}\n#define PL_DW {}\n",
      g.in_h, g.in_w, g.out_h, g.out_w, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h,
      g.dilation_w);
}

}  // namespace tessera::backends::common
