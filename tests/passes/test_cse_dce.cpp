// cse merges equal pure computations (never leaves, never random ops); dce drops what no output needs.
#include "pass_test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Cse, MergesEqualComputationsAndWholeChains) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const Tensor a = ops::tanh(ops::exp(x[0]) * x[1]);
        const Tensor b = ops::tanh(ops::exp(x[0]) * x[1]);
        return std::vector<Tensor>{a + b, a};
      },
      {f32({2, 3}), f32({3})});
  EXPECT_EQ(op_names(g), "exp mul tanh exp mul tanh add");
  ir::Graph c = apply(passes::cse(), g);
  EXPECT_EQ(op_names(c), "exp mul tanh add");
  EXPECT_EQ(c.outputs()[0].node()->input(0), c.outputs()[0].node()->input(1));
  EXPECT_EQ(c.outputs()[1], c.outputs()[0].node()->input(0));
  expect_same_values(g, c);
}

TEST(Cse, MergesMultiOutputNodes) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{ops::split(x[0], {1, 2})[1], ops::split(x[0], {1, 2})[1]};
      },
      {f32({3})});
  ir::Graph c = apply(passes::cse(), g);
  EXPECT_EQ(op_names(c), "split");
  EXPECT_EQ(c.outputs()[0], c.outputs()[1]);
}

TEST(Cse, DifferentAttributesOrTypesDoNotMerge) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{ops::softmax(x[0], 0),       ops::softmax(x[0], 1),
                                   ops::clamp(x[0], 0.0, {}),   ops::clamp(x[0], -0.0, {}),
                                   ops::cast(x[0], DType::f64), ops::cast(x[0], DType::f16)};
      },
      {f32({2, 3})});
  ir::Graph c = apply(passes::cse(), g);
  EXPECT_TRUE(same_graph(g, c)) << ir::print_graph(c);
}

TEST(Cse, ConstantsWithEqualContentsKeepTheirIdentity) {
  // Two parameters that happen to hold the same numbers are still two parameters.
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const Tensor w1 = Tensor::from_vector<float>({1, 2, 3}, {3}, "w1");
        const Tensor w2 = Tensor::from_vector<float>({1, 2, 3}, {3}, "w1");
        return std::vector<Tensor>{x[0] * w1, x[0] * w2};
      },
      {f32({3})});
  ir::Graph c = apply(passes::cse(), g);
  EXPECT_EQ(op_names(c), "constant mul constant mul");
  EXPECT_NE(c.outputs()[0], c.outputs()[1]);
}

TEST(Cse, InputsWithEqualTypesAndNamesKeepTheirIdentity) {
  const Tensor a = Tensor::placeholder("x", DType::f32, {2});
  const Tensor b = Tensor::placeholder("x", DType::f32, {2});
  ir::Graph g = ir::Graph::build({a.value(), b.value()}, {ops::exp(a).value(), ops::exp(b).value()});
  ir::Graph c = apply(passes::cse(), g);
  EXPECT_EQ(op_names(c), "exp exp");
  const std::vector<Array> out =
      run_reference(c, {Array::full(DType::f32, {2}, 0.0), Array::full(DType::f32, {2}, 1.0)});
  EXPECT_NE(out[0].to_f64(), out[1].to_f64());
}

TEST(Cse, RandomOpsNeverMerge) {
  // Nodes with identical attributes (same seed and offset) still stand for two separate draws.
  const ir::Attrs attrs{{"seed", int64_t{3}},  {"offset", int64_t{0}}, {"shape", Shape{4}},
                        {"dtype", DType::f32}, {"low", 0.0},           {"high", 1.0}};
  ir::Graph g = trace(
      [&](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{x[0] + Tensor(ir::make_node1("uniform", {}, attrs)),
                                   x[0] + Tensor(ir::make_node1("uniform", {}, attrs))};
      },
      {f32({4})});
  ir::Graph c = apply(passes::cse(), g);
  EXPECT_EQ(count_op(c, "uniform"), 2u);
  EXPECT_EQ(count_op(c, "add"), 2u);
}

TEST(Cse, DoesNotLookBehindGraphInputs) {
  // Two equal computations where one is bound as a graph input: the bound one is a run-time value.
  const Tensor x = Tensor::placeholder("x", DType::f32, {2});
  const Tensor e1 = ops::exp(x);
  const Tensor e2 = ops::exp(x);
  ir::Graph g = ir::Graph::build({x.value(), e1.value()}, {(e1 + e2).value()});
  ir::Graph c = apply(passes::cse(), g);
  EXPECT_EQ(op_names(c), "exp add");
  const std::vector<Array> out =
      run_reference(c, {Array::full(DType::f32, {2}, 0.0), Array::full(DType::f32, {2}, 5.0)});
  EXPECT_EQ(out[0].to_f64(), (std::vector<double>{6.0, 6.0}));
}

TEST(Dce, SplitWithOneLivePieceBecomesASlice) {
  ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        return ops::exp(ops::split(x[0], {2, 3, 1}, 1)[1]);
      },
      {f32({2, 6})});
  ir::Graph d = apply(passes::dce(), g);
  EXPECT_EQ(op_names(d), "slice exp");
  EXPECT_NE(ir::print_graph(d).find("slice(%0) {axis = 1, start = 2, step = 1, stop = 5}"), std::string::npos)
      << ir::print_graph(d);
  expect_same_values(g, d);
}

TEST(Dce, SplitWithTwoLivePiecesStays) {
  ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        const std::vector<Tensor> p = ops::split(x[0], {2, 3, 1}, 1);
        return ops::sum(p[0]) + ops::sum(p[2]);
      },
      {f32({2, 6})});
  ir::Graph d = apply(passes::dce(), g);
  EXPECT_TRUE(same_graph(g, d));
}

TEST(Dce, NodesLeftDeadByAnotherPassAreGone) {
  // x*1 becomes x: the constant 1 and the mul are not in the result.
  ir::Graph g = trace_graph1([](const std::vector<Tensor>& x) { return ops::exp(x[0] * 1.0); }, {f32({3})});
  ir::Graph d = apply(passes::dce(), apply(passes::algebraic_simplify(), g));
  EXPECT_EQ(op_names(d), "exp");
}

TEST(Dce, NothingToDoReturnsTheSameNodes) {
  ir::Graph g = trace_graph1([](const std::vector<Tensor>& x) { return ops::exp(x[0]) + x[0]; }, {f32({3})});
  EXPECT_TRUE(same_graph(g, apply(passes::dce(), g)));
}

// fill_per_use undoes CSE for fills only: each reader gets its own `full` (generated kernels hold it as
// a literal), a fill that is also an output stays, and the values are unchanged.
TEST(FillPerUse, EveryReaderGetsItsOwnFill) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const Tensor zero = ops::zeros({2, 3});
        return std::vector<Tensor>{ops::where(ops::gt(x[0], ops::zeros({2, 3})), x[0], zero),
                                   ops::sum(ops::where(ops::lt(x[0], ops::ones({2, 3})), x[0], zero)),
                                   ops::exp(x[0])};
      },
      {f32({2, 3})});
  g = apply(passes::cse(), g);
  auto fills = [](const ir::Graph& graph) {
    int n = 0;
    for (const ir::NodePtr& node : graph.nodes()) n += node->op_name() == "full";
    return n;
  };
  ASSERT_EQ(fills(g), 2);  // the zeros (read three times) and the ones
  const ir::Graph split = apply(passes::fill_per_use(), g);
  EXPECT_EQ(fills(split), 4);
  for (const ir::NodePtr& node : split.nodes()) {
    if (node->op_name() == "where") {
      EXPECT_EQ(node->input(2).node()->op_name(), "full");
    }
  }
  expect_same_values(g, split);
  // Nothing shared: the graph itself comes back.
  const ir::Graph once = apply(passes::fill_per_use(), split);
  EXPECT_EQ(op_names(once), op_names(split));
}
