// constant_folding: small all-constant computations become constants; large, expanding, random or
// failing ones do not.
#include "pass_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

Tensor constant_f32(const std::vector<float>& values, const Shape& shape) {
  return Tensor::from_vector<float>(values, shape);
}

const Array& constant_value(const ir::Value& v) {
  return v.node()->attrs().get_tensor("value");
}

}  // namespace

TEST(ConstantFolding, FoldsAChainIntoOneConstant) {
  ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        const Tensor c = ops::exp(ops::neg(constant_f32({0, 1, 2}, {3}))) * 2.0;
        return x[0] + c;
      },
      {f32({3})});
  EXPECT_EQ(op_names(g), "constant neg exp constant mul add");
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_EQ(op_names(f), "constant add");
  const std::vector<double> folded = constant_value(f.outputs()[0].node()->input(1)).to_f64();
  ASSERT_EQ(folded.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(folded[static_cast<size_t>(i)], 2.0 * std::exp(-i), 1e-6);
  expect_same_values(g, f);
}

TEST(ConstantFolding, FoldsGeneratorsThatFeedAComputation) {
  // full() alone stays a generator; full() * constant is folded.
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{x[0] + ops::full({3}, 2.0) * constant_f32({1, 2, 3}, {3}), x[0] * ops::ones({3})};
      },
      {f32({3})});
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_EQ(count_op(f, "full"), 1u);
  EXPECT_EQ(f.outputs()[0].node()->input(1).node()->op_name(), "constant");
  expect_same_values(g, f);
}

TEST(ConstantFolding, MultiOutputAndIntegerOps) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const std::vector<Tensor> parts = ops::split(Tensor::from_vector<int64_t>({1, 2, 3, 4, 5}, {5}), {2, 3});
        return std::vector<Tensor>{x[0] + ops::sum(parts[0]), x[0] * ops::sum(parts[1])};
      },
      {i64({2})});
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_EQ(op_names(f), "constant add constant mul");
  EXPECT_EQ(constant_value(f.outputs()[0].node()->input(1)).item(), 3.0);
  EXPECT_EQ(constant_value(f.outputs()[1].node()->input(1)).item(), 12.0);
  expect_same_values(g, f);
}

TEST(ConstantFolding, HalfPrecisionValuesRoundAsTheKernelDoes) {
  ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        return x[0] + ops::cast(Tensor::from_vector<double>({0.1, 1.0 / 3.0}, {2}), DType::f16);
      },
      {{DType::f16, {2}}});
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_EQ(op_names(f), "constant add");
  const Array folded = constant_value(f.outputs()[0].node()->input(1));
  EXPECT_EQ(folded.dtype(), DType::f16);
  EXPECT_EQ(folded.to_f64(), Array::from_vector<double>({0.1, 1.0 / 3.0}, {2}).astype(DType::f16).to_f64());
  expect_same_values(g, f);
}

TEST(ConstantFolding, KeepsScalarBroadcastsUnfolded) {
  // Folding broadcast_to would turn one number into a big constant the backend must read.
  ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        return x[0] * ops::broadcast_to(ops::neg(Tensor::scalar(3.0)), {4, 5});
      },
      {f32({4, 5})});
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_EQ(op_names(f), "constant broadcast_to mul");  // neg folded, broadcast kept
  EXPECT_EQ(constant_value(f.outputs()[0].node()->input(1).node()->input(0)).item(), -3.0);
  expect_same_values(g, f);
}

TEST(ConstantFolding, LeavesLargeResultsAlone) {
  const Array big = Array::full(DType::f32, {5000}, 1.5);
  ir::Graph g = trace_graph1([&](const std::vector<Tensor>& x) { return x[0] + ops::exp(Tensor::from_array(big)); },
                             {f32({5000})});
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_TRUE(same_graph(g, f)) << op_names(f);
}

TEST(ConstantFolding, NeverFoldsRandomOps) {
  ops::Generator gen(7);
  ir::Graph g = trace_graph1(
      [&](const std::vector<Tensor>& x) {
        return x[0] * ops::bernoulli(Tensor::from_vector<float>({0.5f, 0.5f}, {2}), gen);
      },
      {f32({2})});
  ASSERT_EQ(count_op(g, "bernoulli"), 1u);
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_TRUE(same_graph(g, f)) << op_names(f);
}

TEST(ConstantFolding, AKernelErrorIsLeftForRunTime) {
  // An out-of-range index must still be reported when the graph runs, not swallowed or thrown here.
  ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        return x[0] + ops::index_select(constant_f32({1, 2, 3}, {3}), 0, Tensor::from_vector<int64_t>({5}, {1}));
      },
      {f32({1})});
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_EQ(count_op(f, "index_select"), 1u);
  EXPECT_TESSERA_ERROR(run_reference(f, random_inputs(f, 1)), "index_select");
}

TEST(ConstantFolding, ConstantInputsOfTheGraphAreNotFolded) {
  // A constant bound as a graph input is a run-time value: its computations stay.
  const Tensor c = constant_f32({1, 2}, {2});
  const Tensor y = ops::exp(c);
  ir::Graph g = ir::Graph::build({c.value()}, {y.value()});
  ir::Graph f = apply(passes::constant_folding(), g);
  EXPECT_EQ(op_names(f), "exp");
}
