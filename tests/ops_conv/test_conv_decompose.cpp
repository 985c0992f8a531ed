// conv, conv_input_grad and conv_weight_grad decomposed (conv_decompose.cpp) against their reference
// kernels: 1d/2d/3d, strides 1-3, padding 0-2, dilation 1-2, groups, inputs whose trailing elements no
// window reads, cropped outputs, f64/f32/bf16; and the decompositions use one matmul each and only ops
// the CUDA backend keeps.
#include "decompose_check.h"
#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;

  Shape out() const {
    Shape o;
    for (size_t i = 0; i + 2 < x.size(); ++i) {
      o.push_back((x[i + 2] + 2 * padding[i] - dilation[i] * (w[i + 2] - 1) - 1) / stride[i] + 1);
    }
    return o;
  }
  Shape grad_shape() const {
    Shape g = {x[0], w[0]};
    for (int64_t o : out()) g.push_back(o);
    return g;
  }
  Shape spatial(const Shape& s) const { return Shape(s.begin() + 2, s.end()); }
};

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> c = {
      {{2, 3, 11}, {4, 3, 3}, {1}, {0}, {1}},
      {{2, 4, 13}, {6, 2, 3}, {3}, {2}, {2}, 2},
      {{2, 1, 12, 12}, {8, 1, 3, 3}, {1, 1}, {0, 0}, {1, 1}},  // the CNN's first layer, smaller
      {{2, 3, 9, 8}, {4, 3, 3, 2}, {2, 3}, {1, 0}, {1, 2}},
      {{1, 2, 9, 6}, {3, 2, 2, 3}, {3, 2}, {0, 0}, {1, 1}},  // row 8 and column 5 are read by no window
      {{2, 4, 7, 7}, {6, 2, 3, 3}, {2, 2}, {2, 1}, {2, 1}, 2},
      {{1, 2, 5, 5}, {2, 2, 3, 3}, {1, 1}, {2, 2}, {1, 1}},
      {{1, 2, 5, 6, 4}, {3, 2, 2, 2, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}},
  };
  return c;
}

const Precision kConvPrecisions[] = {{DType::f64, 1e-12}, {DType::f32, 1e-5}, {DType::bf16, 3e-2}};

std::string describe_conv(const ConvCase& c) {
  return fmt::format("x {} w {} stride {} padding {} dilation {} groups {}", shape_str(c.x), shape_str(c.w),
                     shape_str(c.stride), shape_str(c.padding), shape_str(c.dilation), c.groups);
}

// The single matmul of a decomposition multiplies the whole batch at once: no batch axis other than
// the groups'.
void expect_one_matmul(const ir::Graph& d, int64_t groups) {
  int matmuls = 0;
  for (const ir::NodePtr& n : d.nodes()) {
    if (n->op_name() != "matmul") continue;
    ++matmuls;
    for (const ir::Value& in : n->inputs()) {
      EXPECT_EQ(in.rank(), groups == 1 ? 2 : 3);
      if (in.rank() == 3) {
        EXPECT_EQ(in.shape()[0], groups);
      }
    }
  }
  EXPECT_EQ(matmuls, 1);
}

void check(const ir::Graph& g, const std::vector<Array>& inputs, const Precision& p, int64_t groups) {
  const ir::Graph d = expect_decomposition_matches(g, inputs, p.rtol);
  expect_one_matmul(d, groups);
  if (p.dtype == DType::f32) expect_cuda_keeps_all(d);
}

TEST(ConvDecompose, ForwardWithAndWithoutBias) {
  for (const ConvCase& c : conv_cases()) {
    for (const Precision& p : kConvPrecisions) {
      for (bool bias : {false, true}) {
        SCOPED_TRACE(describe_conv(c) + " " + dtype_name(p.dtype) + (bias ? " bias" : ""));
        std::vector<ir::TensorType> types = {{p.dtype, c.x}, {p.dtype, c.w}};
        std::vector<Array> inputs = {random_array(c.x, 1, -1, 1, p.dtype), random_array(c.w, 2, -1, 1, p.dtype)};
        if (bias) {
          types.push_back({p.dtype, {c.w[0]}});
          inputs.push_back(random_array({c.w[0]}, 3, -1, 1, p.dtype));
        }
        const ir::Graph g = trace(
            [&](const std::vector<Tensor>& a) {
              return std::vector<Tensor>{
                  ops::conv(a[0], a[1], bias ? a[2] : Tensor(), c.stride, c.padding, c.dilation, c.groups)};
            },
            types);
        check(g, inputs, p, c.groups);
      }
    }
  }
}

TEST(ConvDecompose, InputGrad) {
  for (const ConvCase& c : conv_cases()) {
    for (const Precision& p : kConvPrecisions) {
      SCOPED_TRACE(describe_conv(c) + " " + dtype_name(p.dtype));
      const ir::Graph g = trace(
          [&](const std::vector<Tensor>& a) {
            return std::vector<Tensor>{
                ops::conv_input_grad(a[0], a[1], c.spatial(c.x), c.stride, c.padding, c.dilation, c.groups)};
          },
          {{p.dtype, c.grad_shape()}, {p.dtype, c.w}});
      check(g, {random_array(c.grad_shape(), 4, -1, 1, p.dtype), random_array(c.w, 5, -1, 1, p.dtype)}, p, c.groups);
    }
  }
}

TEST(ConvDecompose, WeightGrad) {
  for (const ConvCase& c : conv_cases()) {
    for (const Precision& p : kConvPrecisions) {
      SCOPED_TRACE(describe_conv(c) + " " + dtype_name(p.dtype));
      const ir::Graph g = trace(
          [&](const std::vector<Tensor>& a) {
            return std::vector<Tensor>{
                ops::conv_weight_grad(a[0], a[1], c.spatial(c.w), c.stride, c.padding, c.dilation, c.groups)};
          },
          {{p.dtype, c.x}, {p.dtype, c.grad_shape()}});
      check(g, {random_array(c.x, 6, -1, 1, p.dtype), random_array(c.grad_shape(), 7, -1, 1, p.dtype)}, p, c.groups);
    }
  }
}

// Outputs smaller than the natural size: conv's output_size attribute, and gradients of such
// convolutions (the gradient rules of transposed convolutions produce both).
TEST(ConvDecompose, CroppedOutputs) {
  const Shape x = {2, 3, 9, 8}, w = {4, 3, 3, 3}, g = {2, 4, 3, 2};  // natural output 4 x 3
  const ir::Attrs attrs{{"stride", std::vector<int64_t>{2, 2}},
                        {"padding", std::vector<int64_t>{1, 0}},
                        {"dilation", std::vector<int64_t>{1, 1}},
                        {"groups", int64_t{1}}};
  ir::Attrs fwd = attrs, in_grad = attrs, w_grad = attrs;
  fwd.set("output_size", std::vector<int64_t>{3, 2});
  in_grad.set("input_size", std::vector<int64_t>{9, 8});
  w_grad.set("kernel_size", std::vector<int64_t>{3, 3});
  const Precision p = {DType::f64, 1e-12};
  check(one_op_graph("conv", {{DType::f64, x}, {DType::f64, w}}, fwd), {random_array(x, 8), random_array(w, 9)}, p, 1);
  check(one_op_graph("conv_input_grad", {{DType::f64, g}, {DType::f64, w}}, in_grad),
        {random_array(g, 10), random_array(w, 11)}, p, 1);
  check(one_op_graph("conv_weight_grad", {{DType::f64, x}, {DType::f64, g}}, w_grad),
        {random_array(x, 12), random_array(g, 13)}, p, 1);
}

// The decomposition really replaces the op: a graph decomposed without conv in the unsupported set
// keeps it, and the decomposed one has none left (also checked by expect_decomposition_matches).
TEST(ConvDecompose, OnlyUnsupportedConvsAreDecomposed) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{ops::conv2d(a[0], a[1], {}, {1, 1}, {1, 1})};
      },
      {{DType::f32, {1, 2, 5, 5}}, {DType::f32, {3, 2, 3, 3}}});
  const ir::Graph kept = passes::decompose_where(g, [](const ir::Node& n) { return n.op_name() == "max_pool"; });
  ASSERT_EQ(kept.nodes().size(), g.nodes().size());
  const ir::Graph d = decompose_conv_pool(g);
  std::set<std::string> ops;
  for (const ir::NodePtr& n : d.nodes()) ops.insert(n->op_name());
  EXPECT_FALSE(ops.count("conv"));
  EXPECT_TRUE(ops.count("gather"));
  EXPECT_TRUE(ops.count("matmul"));
}

}  // namespace
