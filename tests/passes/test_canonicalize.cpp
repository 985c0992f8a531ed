// canonicalize: constants second in commutative ops, one operand order for a+b and b+a, axes
// normalised; values never change.
#include "pass_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

const ir::Node& output_node(const ir::Graph& g, size_t i = 0) {
  return *g.outputs().at(i).node();
}

}  // namespace

TEST(Canonicalize, ConstantOperandMovesSecond) {
  for (const char* op : {"add", "mul", "maximum", "minimum", "eq", "ne"}) {
    ir::Graph g = trace_graph1(
        [op](const std::vector<Tensor>& x) {
          return Tensor(ir::make_node1(op, {Tensor::scalar(2.0), x[0]}));
        },
        {f32({3})});
    ASSERT_EQ(output_node(g).input(0).node()->op_name(), "constant") << op;
    ir::Graph c = apply(passes::canonicalize(), g);
    EXPECT_EQ(output_node(c).op_name(), op);
    EXPECT_EQ(output_node(c).input(0), g.inputs()[0]) << op;
    EXPECT_EQ(output_node(c).input(1).node()->op_name(), "constant") << op;
    expect_same_values(g, c);
  }
}

TEST(Canonicalize, LogicalOpsWithConstantOperand) {
  for (const char* op : {"logical_and", "logical_or"}) {
    ir::Graph g = trace_graph1(
        [op](const std::vector<Tensor>& x) {
          return Tensor(ir::make_node1(op, {Tensor::scalar(1.0, DType::boolean), x[0]}));
        },
        {{DType::boolean, {4}}});
    ir::Graph c = apply(passes::canonicalize(), g);
    EXPECT_EQ(output_node(c).input(0), g.inputs()[0]) << op;
    expect_same_values(g, c);
  }
}

TEST(Canonicalize, NonCommutativeOpsKeepTheirOrder) {
  for (const char* op : {"sub", "div", "pow", "lt"}) {
    ir::Graph g = trace_graph1(
        [op](const std::vector<Tensor>& x) {
          return Tensor(ir::make_node1(op, {Tensor::scalar(2.0), x[0]}));
        },
        {f32({3})});
    ir::Graph c = apply(passes::canonicalize(), g);
    EXPECT_TRUE(same_graph(g, c)) << op;
  }
}

TEST(Canonicalize, CommutedOperandsBecomeOneComputationAfterCse) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{ops::add(x[0], x[1]), ops::add(x[1], x[0]), ops::mul(x[1], x[0]),
                                   ops::mul(x[0], x[1])};
      },
      {f32({2, 3}), f32({3})});
  // Without canonicalisation CSE sees four different computations.
  EXPECT_EQ(apply(passes::cse(), g).nodes().size(), 4u);
  ir::Graph c = apply(passes::cse(), apply(passes::canonicalize(), g));
  EXPECT_EQ(op_names(c), "add mul");
  EXPECT_EQ(c.outputs()[0], c.outputs()[1]);
  EXPECT_EQ(c.outputs()[2], c.outputs()[3]);
  expect_same_values(g, c);
}

TEST(Canonicalize, LaterDefinedOperandFirst) {
  // bias + matmul(x, w) reads as matmul(x, w) + bias: the computed value goes first.
  ir::Graph g = trace_graph1([](const std::vector<Tensor>& x) { return ops::add(x[2], ops::matmul(x[0], x[1])); },
                             {f32({2, 3}), f32({3, 4}), f32({4})});
  ir::Graph c = apply(passes::canonicalize(), g);
  EXPECT_EQ(output_node(c).input(0).node()->op_name(), "matmul");
  EXPECT_EQ(output_node(c).input(1), g.inputs()[2]);
}

TEST(Canonicalize, MaximumWithNaNKeepsItsValue) {
  ir::Graph g =
      trace_graph1([](const std::vector<Tensor>& x) { return ops::maximum(x[1], x[0]); }, {f32({4}), f32({4})});
  ir::Graph c = apply(passes::canonicalize(), g);
  const float nan = std::nanf("");
  const std::vector<Array> inputs{Array::from_vector<float>({nan, 1, nan, -2}, {4}),
                                  Array::from_vector<float>({0, nan, nan, 3}, {4})};
  expect_same_values(g, c, inputs);
  const std::vector<double> got = run_reference(c, inputs)[0].to_f64();
  EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1]) && std::isnan(got[2]));
  EXPECT_EQ(got[3], 3.0);
}

TEST(Canonicalize, NormalisesAxes) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{ops::softmax(x[0], -1),  ops::softmax(x[0], 1),  ops::sum(x[0]),
                                   ops::sum(x[0], {-1, 0}), ops::sum(x[0], {1, 0}), ops::argmax(x[0], -2)};
      },
      {f32({2, 3})});
  ir::Graph c = apply(passes::canonicalize(), g);
  const std::string text = ir::print_graph(c);
  EXPECT_EQ(text.find("axis = -"), std::string::npos) << text;
  EXPECT_EQ(text.find("axes = []"), std::string::npos) << text;
  EXPECT_NE(text.find("sum(%0) {axes = [0, 1], keepdims = false}"), std::string::npos) << text;
  EXPECT_NE(text.find("argmax(%0) {axis = 0, keepdims = false}"), std::string::npos) << text;
  // Now equal spellings merge.
  ir::Graph merged = apply(passes::cse(), c);
  EXPECT_EQ(op_names(merged), "softmax sum argmax");
  expect_same_values(g, merged);
}

TEST(Canonicalize, IsIdempotent) {
  ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) { return ops::mul(2.0 + x[0], ops::add(x[1], x[0])) * ops::sum(x[1], {-1}); },
      {f32({3}), f32({3})});
  ir::Graph once = apply(passes::canonicalize(), g);
  ir::Graph twice = apply(passes::canonicalize(), once);
  EXPECT_TRUE(same_graph(once, twice));
  expect_same_values(g, twice);
}
