// Adaptive average pooling, upsampling and their gradients decomposed (resample_decompose.cpp, for
// backends without them) against their reference kernels: 1d/2d/3d, shrinking and growing axes,
// every mode (nearest exact in any dtype, inf included; linear with and without align_corners, with
// scale factors), f32 and f64.
#include <limits>

#include "decompose_check.h"
#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

const std::set<std::string>& resample_ops() {
  static const std::set<std::string> ops = {"adaptive_avg_pool", "adaptive_avg_pool_grad", "upsample", "upsample_grad"};
  return ops;
}

// `g` and its decomposition on the reference backend: within rtol * (1 + |expected|), or exactly.
void expect_resample_decomposition_matches(const ir::Graph& g, const std::vector<Array>& inputs, double rtol) {
  const ir::Graph d = passes::decompose_where(g, [](const ir::Node& n) { return resample_ops().count(n.op_name()) > 0; });
  for (const ir::NodePtr& n : d.nodes()) EXPECT_FALSE(resample_ops().count(n->op_name())) << "left whole: " << n->op_name();
  backends::Backend& ref = backends::backend_by_name("reference");
  const Array want = ref.compile(g)->run(inputs)[0];
  const Array got = ref.compile(d)->run(inputs)[0];
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  if (rtol == 0) {
    EXPECT_EQ(got.to_f64(), want.to_f64());
    return;
  }
  expect_close(Tensor::from_array(got), want.to_f64(), rtol, rtol);
}

TEST(ResampleDecompose, AdaptivePoolingAndItsGradient) {
  struct Case {
    Shape x, out;
  };
  for (const Case& c : {Case{{2, 3, 10}, {4}}, Case{{2, 3, 7, 9}, {3, 4}}, Case{{1, 2, 7, 9}, {5, 2}},
                        Case{{1, 2, 4, 5}, {4, 5}}, Case{{1, 1, 5, 6, 7}, {2, 3, 4}}}) {
    for (DType dt : {DType::f32, DType::f64}) {
      SCOPED_TRACE(shape_str(c.x) + " -> " + shape_str(c.out) + " " + dtype_name(dt));
      const ir::Graph pool = one_op_graph("adaptive_avg_pool", {{dt, c.x}}, {{"output_size", c.out}});
      expect_resample_decomposition_matches(pool, {random_array(c.x, 1, -2, 2, dt)}, 1e-6);
      Shape g = c.x;
      for (size_t d = 0; d < c.out.size(); ++d) g[g.size() - c.out.size() + d] = c.out[d];
      const Shape input_size(c.x.end() - static_cast<std::ptrdiff_t>(c.out.size()), c.x.end());
      const ir::Graph grad = one_op_graph("adaptive_avg_pool_grad", {{dt, g}}, {{"input_size", input_size}});
      expect_resample_decomposition_matches(grad, {random_array(g, 2, -2, 2, dt)}, 1e-6);
    }
  }
}

TEST(ResampleDecompose, UpsamplingInEveryModeAndItsGradient) {
  struct Case {
    Shape x, size;
    std::string mode;
    bool align_corners = false;
    std::vector<double> scales;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4, 5}, {7, 9}, "nearest"},        {{2, 3, 4, 5}, {3, 2}, "nearest"},
      {{2, 3, 4, 5}, {7, 9}, "nearest-exact"},  {{2, 3, 6}, {13}, "linear"},
      {{2, 3, 4, 5}, {7, 9}, "linear"},          {{2, 3, 4, 5}, {7, 9}, "linear", true},
      {{2, 3, 6, 5}, {3, 4}, "linear"},          {{1, 2, 4, 5}, {8, 12}, "linear", false, {2.0, 2.5}},
      {{1, 1, 3, 4, 5}, {5, 6, 7}, "linear", true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.x) + " -> " + shape_str(c.size) + " " + c.mode + (c.align_corners ? " corners" : ""));
    ir::Attrs up{{"size", c.size}, {"mode", c.mode}, {"align_corners", c.align_corners}};
    const Shape input_size(c.x.end() - static_cast<std::ptrdiff_t>(c.size.size()), c.x.end());
    ir::Attrs down{{"input_size", input_size}, {"mode", c.mode}, {"align_corners", c.align_corners}};
    if (!c.scales.empty()) {
      up.set("scales", c.scales);
      down.set("scales", c.scales);
    }
    for (DType dt : {DType::f32, DType::f64}) {
      SCOPED_TRACE(dtype_name(dt));
      expect_resample_decomposition_matches(one_op_graph("upsample", {{dt, c.x}}, up), {random_array(c.x, 3, -2, 2, dt)},
                                            1e-6);
      Shape g = c.x;
      for (size_t d = 0; d < c.size.size(); ++d) g[g.size() - c.size.size() + d] = c.size[d];
      expect_resample_decomposition_matches(one_op_graph("upsample_grad", {{dt, g}}, down),
                                            {random_array(g, 4, -2, 2, dt)}, 1e-6);
    }
  }
}

TEST(ResampleDecompose, NearestUpsamplingCopiesExactlyInAnyDtype) {
  // Picks, not products: integers stay integers, inf and NaN stay where they were.
  const ir::Attrs up{{"size", Shape{5, 7}}, {"mode", "nearest"}, {"align_corners", false}};
  expect_resample_decomposition_matches(one_op_graph("upsample", {{DType::i64, {2, 3, 4}}}, up),
                                        {int_array({2, 3, 4}, 5, 100, DType::i64)}, 0);
  Array x = random_array({1, 3, 4}, 6, -1, 1, DType::f32);
  x.data<float>()[2] = std::numeric_limits<float>::infinity();
  expect_resample_decomposition_matches(one_op_graph("upsample", {{DType::f32, {1, 3, 4}}}, up), {x}, 0);
}

}  // namespace
