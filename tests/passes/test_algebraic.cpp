// algebraic_simplify: each identity, the op sequence after it, unchanged values (bit for bit), and
// the cases that must not be rewritten (dtype promotion, floats times zero, values used elsewhere).
#include "pass_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Simplifies (then drops what became dead) and checks the values on random inputs.
ir::Graph simplify(const ir::Graph& g) {
  ir::Graph s = apply(passes::dce(), apply(passes::algebraic_simplify(), g));
  expect_same_values(g, s, 3);
  return s;
}

std::string simplified_ops(const Fn& fn, const TypeList& types) {
  return op_names(simplify(trace_graph1(fn, types)));
}

// True when the graph's single output is its first input: the whole computation vanished.
bool is_identity(const ir::Graph& g) {
  return g.nodes().empty() && g.outputs()[0] == g.inputs()[0];
}

Tensor node(const std::string& op, std::vector<Tensor> inputs, ir::Attrs attrs = {}) {
  std::vector<ir::Value> values(inputs.begin(), inputs.end());
  return ir::make_node1(op, values, std::move(attrs));
}

}  // namespace

TEST(Algebraic, NeutralElementsDisappear) {
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"x*1", [](const std::vector<Tensor>& x) { return x[0] * 1.0; }},
      {"1*x", [](const std::vector<Tensor>& x) { return 1.0 * x[0]; }},
      {"x+0", [](const std::vector<Tensor>& x) { return x[0] + 0.0; }},
      {"0+x", [](const std::vector<Tensor>& x) { return 0.0 + x[0]; }},
      {"x-0", [](const std::vector<Tensor>& x) { return x[0] - 0.0; }},
      {"x/1", [](const std::vector<Tensor>& x) { return x[0] / 1.0; }},
      {"x**1", [](const std::vector<Tensor>& x) { return ops::pow(x[0], 1.0); }},
      {"x*ones",
       [](const std::vector<Tensor>& x) {
         return x[0] * ops::ones({2, 3});
       }},
      {"x+zeros_like", [](const std::vector<Tensor>& x) { return ops::zeros_like(x[0]) + x[0]; }},
      {"neg(neg(x))", [](const std::vector<Tensor>& x) { return ops::neg(ops::neg(x[0])); }},
      {"cast to f32",
       [](const std::vector<Tensor>& x) {
         return node("cast", {x[0]}, {{"dtype", DType::f32}});
       }},
      {"f32->f64->f32",
       [](const std::vector<Tensor>& x) { return ops::cast(ops::cast(x[0], DType::f64), DType::f32); }},
      {"transpose twice", [](const std::vector<Tensor>& x) { return ops::transpose(ops::transpose(x[0])); }},
      {"reshape to itself",
       [](const std::vector<Tensor>& x) {
         return node("reshape", {x[0]}, {{"shape", Shape{2, 3}}});
       }},
      {"reshape there and back",
       [](const std::vector<Tensor>& x) {
         return ops::reshape(ops::reshape(x[0], {6}), {2, 3});
       }},
      {"broadcast to itself",
       [](const std::vector<Tensor>& x) {
         return node("broadcast_to", {x[0]}, {{"shape", Shape{2, 3}}});
       }},
      {"whole slice", [](const std::vector<Tensor>& x) { return ops::slice(x[0], 1, 0, 3); }},
      {"concat of one", [](const std::vector<Tensor>& x) { return ops::concat({x[0]}, 0); }},
  };
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    ir::Graph g = trace_graph1(fn, {f32({2, 3})});
    ASSERT_FALSE(g.nodes().empty());
    EXPECT_TRUE(is_identity(simplify(g))) << op_names(simplify(g));
  }
}

TEST(Algebraic, IdentityOperandThatWidensTheShapeBecomesABroadcast) {
  // x [3] + zeros [4, 3] is x repeated over 4 rows, not x.
  const ir::Graph s = simplify(trace_graph1(
      [](const std::vector<Tensor>& x) {
        return x[0] + ops::zeros({4, 3});
      },
      {f32({3})}));
  EXPECT_EQ(op_names(s), "broadcast_to");
  EXPECT_EQ(s.outputs()[0].shape(), (Shape{4, 3}));
  EXPECT_EQ(simplified_ops(
                [](const std::vector<Tensor>& x) {
                  return ops::ones({2, 1, 3}) * x[0];
                },
                {f32({3})}),
            "broadcast_to");
}

TEST(Algebraic, NoRewriteWhenTheIdentityOperandPromotesTheDtype) {
  // f32 + f64 zero is an f64 result: x itself would have the wrong type.
  EXPECT_EQ(
      simplified_ops([](const std::vector<Tensor>& x) { return x[0] + Tensor::scalar(0.0, DType::f64); }, {f32({3})}),
      "constant add");
  EXPECT_EQ(
      simplified_ops([](const std::vector<Tensor>& x) { return x[0] * Tensor::scalar(1.0, DType::f32); }, {i64({3})}),
      "constant mul");
  // An i64 x with an i32 one keeps x's dtype: rewritten.
  EXPECT_EQ(
      simplified_ops([](const std::vector<Tensor>& x) { return x[0] * Tensor::scalar(1.0, DType::i32); }, {i64({3})}),
      "");
}

TEST(Algebraic, NonSplatConstantsAreNotIdentities) {
  EXPECT_EQ(simplified_ops(
                [](const std::vector<Tensor>& x) {
                  return x[0] * Tensor::from_vector<float>({1, 1, 2}, {3});
                },
                {f32({3})}),
            "constant mul");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return x[0] + 1.0; }, {f32({3})}), "constant add");
}

TEST(Algebraic, FloatTimesZeroIsKept) {
  // NaN * 0 and inf * 0 are NaN: folding to 0 would change the result.
  const ir::Graph g = trace_graph1([](const std::vector<Tensor>& x) { return x[0] * 0.0; }, {f32({3})});
  const ir::Graph s = simplify(g);
  EXPECT_EQ(op_names(s), "constant mul");
  const std::vector<double> out =
      run_reference(s, {Array::from_vector<float>({std::nanf(""), INFINITY, 2}, {3})})[0].to_f64();
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
  EXPECT_EQ(out[2], 0.0);
}

TEST(Algebraic, IntegerTimesZeroIsZero) {
  const ir::Graph s =
      simplify(trace_graph1([](const std::vector<Tensor>& x) { return x[0] * 0.0 - x[1]; }, {i64({3}), i64({2, 3})}));
  EXPECT_EQ(op_names(s), "full sub");
  EXPECT_EQ(s.outputs()[0].node()->input(0).shape(), Shape{3});
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::cast(x[0], DType::i32) * 0.0; },
                           {{DType::boolean, {4}}}),
            "full");
}

TEST(Algebraic, NegationRules) {
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return x[0] * -1.0; }, {f32({3})}), "neg");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return x[0] + ops::neg(x[1]); }, {f32({3}), f32({2, 3})}),
            "sub");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return x[0] - ops::neg(x[1]); }, {f32({3}), f32({3})}),
            "add");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::neg(x[0]) * ops::neg(x[1]); },
                           {f32({3}), f32({3})}),
            "mul");
}

TEST(Algebraic, DivisionByAPowerOfTwoBecomesAMultiply) {
  const ir::Graph s = simplify(trace_graph1([](const std::vector<Tensor>& x) { return x[0] / 0.25; }, {f32({3})}));
  EXPECT_EQ(op_names(s), "full mul");
  EXPECT_NE(ir::print_graph(s).find("value = 4.0"), std::string::npos) << ir::print_graph(s);
  // 3 has no exact reciprocal: the division stays.
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return x[0] / 3.0; }, {f32({3})}), "constant div");
  // Integer division computes in f32: not rewritten.
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return x[0] / 2.0; }, {i64({3})}), "constant div");
}

TEST(Algebraic, SquareFromPowerTwo) {
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::pow(x[0], 2.0); }, {f32({3})}), "square");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::pow(x[0], 3.0); }, {f32({3})}),
            "constant pow");
}

TEST(Algebraic, PermuteChainsCompose) {
  const ir::Graph s = simplify(trace_graph1(
      [](const std::vector<Tensor>& x) {
        return ops::permute(ops::permute(x[0], {2, 0, 1}), {0, 2, 1});
      },
      {f32({2, 3, 4})}));
  EXPECT_EQ(op_names(s), "permute");
  // y = x.permute(2, 0, 1) is [4, 2, 3]; y.permute(0, 2, 1) is [4, 3, 2] = x.permute(2, 1, 0).
  EXPECT_NE(ir::print_graph(s).find("permute(%0) {axes = [2, 1, 0]}"), std::string::npos) << ir::print_graph(s);
}

TEST(Algebraic, ReshapeChainsCollapse) {
  const ir::Graph s = simplify(trace_graph1(
      [](const std::vector<Tensor>& x) {
        return ops::reshape(ops::reshape(ops::reshape(x[0], {6, 4}), {24}), {4, 6});
      },
      {f32({2, 3, 4})}));
  EXPECT_EQ(op_names(s), "reshape");
  EXPECT_EQ(s.outputs()[0].node()->input(0), s.inputs()[0]);
}

TEST(Algebraic, BroadcastChainsCollapse) {
  const ir::Graph s = simplify(trace_graph1(
      [](const std::vector<Tensor>& x) {
        return ops::exp(ops::broadcast_to(ops::broadcast_to(x[0], {2, 3}), {4, 2, 3}));
      },
      {f32({3})}));
  EXPECT_EQ(op_names(s), "broadcast_to exp");
  EXPECT_EQ(s.outputs()[0].node()->input(0).node()->input(0), s.inputs()[0]);
}

TEST(Algebraic, LossyCastRoundTripsStay) {
  EXPECT_EQ(
      simplified_ops([](const std::vector<Tensor>& x) { return ops::cast(ops::cast(x[0], DType::f16), DType::f32); },
                     {f32({3})}),
      "cast cast");
  EXPECT_EQ(
      simplified_ops([](const std::vector<Tensor>& x) { return ops::cast(ops::cast(x[0], DType::i32), DType::f32); },
                     {f32({3})}),
      "cast cast");
  // Through bool every nonzero becomes 1.
  EXPECT_EQ(
      simplified_ops([](const std::vector<Tensor>& x) { return ops::cast(ops::cast(x[0], DType::boolean), DType::u8); },
                     {{DType::u8, {3}}}),
      "cast cast");
  // Through a wider type the first cast goes: i32 -> f64 -> f32 is i32 -> f32.
  EXPECT_EQ(
      simplified_ops([](const std::vector<Tensor>& x) { return ops::cast(ops::cast(x[0], DType::f64), DType::f32); },
                     {{DType::i32, {3}}}),
      "cast");
}

TEST(Algebraic, ScalarBroadcastFeedsTheElementwiseOpDirectly) {
  const ir::Graph s = simplify(trace_graph1(
      [](const std::vector<Tensor>& x) {
        const Tensor scale = ops::reshape(ops::sum(x[1]), {1});
        return x[0] * ops::broadcast_to(scale, {2, 3}) + ops::broadcast_to(x[1], {2, 3});
      },
      {f32({2, 3}), f32({3})}));
  EXPECT_EQ(op_names(s), "sum mul add");
  EXPECT_EQ(s.outputs()[0].node()->input(0).node()->input(1).shape(), Shape{});
  // A broadcast that the result's shape needs stays.
  EXPECT_EQ(simplified_ops(
                [](const std::vector<Tensor>& x) {
                  return ops::broadcast_to(x[0], {2, 3}) * x[1];
                },
                {f32({3}), f32({1})}),
            "broadcast_to mul");
}

TEST(Algebraic, ReductionsOverSizeOneAxes) {
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::sum(x[0], {1}, true); }, {f32({2, 1, 3})}),
            "");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::mean(x[0], {1}); }, {f32({2, 1, 3})}),
            "reshape");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::max(x[0]); }, {f32({})}), "");
  // Summing bools counts them in i64: not an identity.
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::sum(x[0], {0}, true); },
                           {{DType::boolean, {1, 2}}}),
            "sum");
  EXPECT_EQ(simplified_ops([](const std::vector<Tensor>& x) { return ops::sum(x[0], {1}); }, {f32({2, 3})}), "sum");
}

TEST(Algebraic, KeepdimsReductionThenReshapeIsOneReduction) {
  const ir::Graph s = simplify(trace_graph1(
      [](const std::vector<Tensor>& x) { return ops::reshape(ops::sum(x[0], {0}, true), {3}); }, {f32({4, 3})}));
  EXPECT_EQ(op_names(s), "sum");
  EXPECT_FALSE(s.outputs()[0].node()->attrs().get_bool("keepdims"));
  // Not when the keepdims result is used elsewhere: that would compute the sum twice.
  EXPECT_EQ(simplified_ops(
                [](const std::vector<Tensor>& x) {
                  const Tensor kept = ops::sum(x[0], {0}, true);
                  return ops::reshape(kept, {3}) + kept;
                },
                {f32({4, 3})}),
            "sum reshape add");
}

TEST(Algebraic, RandomOpsAreNotTouched) {
  ops::Generator gen(1);
  EXPECT_EQ(
      simplified_ops([&](const std::vector<Tensor>& x) { return x[0] + ops::uniform({3}, 0.0, 1.0, gen); }, {f32({3})}),
      "uniform add");
}
