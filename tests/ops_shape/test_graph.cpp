// The shape ops inside graphs: traced, verified, printed and parsed back, and run compiled with the
// same results as eagerly.
#include <limits>

#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {
std::vector<Tensor> shape_ops(const std::vector<Tensor>& xs) {
  const Tensor& x = xs[0];
  return {ops::slice(x, 1, -1, std::numeric_limits<int64_t>::min(), -2),
          ops::concat({x, ops::flip(x, {0}), x}, 0),
          ops::split(x, {2, 4}, 1)[1],
          ops::pad(x, {{1, 2}, {3, 1}}, ops::PadMode::Reflect),
          ops::pad(x, {{0, 1}}, ops::PadMode::Constant, -1.5),
          ops::slice_backward(x, 0, 7, -2, 8),
          ops::repeat(x, {1, 2}),
          ops::triu(x, 1),
          ops::stack({x, x}, 2)};
}
}  // namespace

TEST(ShapeGraph, TextRoundTripAndCompiledRun) {
  ir::Graph g = trace(shape_ops, {{DType::f32, {4, 6}}}, {"x"});
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  ir::Graph back = ir::parse_graph(text);
  ir::verify(back);
  EXPECT_EQ(ir::print_graph(back), text) << text;

  const Tensor x = iota_tensor({4, 6});
  const std::vector<Tensor> eager = shape_ops({x});
  auto compiled = compile(shape_ops);
  const std::vector<Tensor> run = compiled({x});
  ASSERT_EQ(run.size(), eager.size());
  for (size_t i = 0; i < run.size(); ++i) {
    expect_shape(run[i], eager[i].shape());
    expect_close(run[i], eager[i].array().to_f64());
  }
}

TEST(ShapeGraph, GradientGraphOfSliceAndPadVerifies) {
  auto f = [](const std::vector<Tensor>& xs) {
    return ops::sum(ops::square(ops::pad(ops::slice(xs[0], 0, 3, 0, -1), {{1, 1}}, ops::PadMode::Reflect)));
  };
  ir::Graph g = trace([f](const std::vector<Tensor>& xs) { return grad(f)(xs); }, {{DType::f64, {5, 2}}}, {"x"});
  ir::verify(g);
  ir::Graph back = ir::parse_graph(ir::print_graph(g));
  ir::verify(back);
}
