// stable_rewrites: each rewrite, the ops after it, equal values where the naive form is accurate, and
// the improvement where it is not (inputs at which the naive form rounds to 0, overflows or underflows).
#include "pass_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

ir::Graph stabilise(const ir::Graph& g) {
  return apply(passes::dce(), apply(passes::stable_rewrites(), g));
}

std::vector<double> run1(const ir::Graph& g, const std::vector<Array>& inputs) {
  return run_reference(g, inputs)[0].to_f64();
}

}  // namespace

TEST(StableRewrites, LogOnePlusXBecomesLog1p) {
  for (const Fn& fn : {Fn([](const std::vector<Tensor>& x) { return ops::log(1.0 + x[0]); }),
                       Fn([](const std::vector<Tensor>& x) { return ops::log(x[0] + 1.0); }),
                       Fn([](const std::vector<Tensor>& x) { return ops::log(x[0] + ops::ones({3})); })}) {
    const ir::Graph g = trace_graph1(fn, {f32({3})});
    const ir::Graph s = stabilise(g);
    EXPECT_EQ(op_names(s), "log1p");
    expect_same_values(g, s, random_inputs(g, 1, 0.5, 2.0), 0.0, 1e-6);
    // log(1 + 1e-10) is log(1) = 0 in f32; log1p keeps the 1e-10.
    const std::vector<Array> tiny{Array::from_vector<float>({1e-10f, -1e-9f, 3e-8f}, {3})};
    EXPECT_EQ(run1(g, tiny)[0], 0.0);
    const std::vector<double> fixed = run1(s, tiny);
    EXPECT_NEAR(fixed[0], 1e-10, 1e-16);
    EXPECT_NEAR(fixed[1], -1e-9, 1e-15);
    EXPECT_NEAR(fixed[2], 3e-8, 1e-14);
  }
}

TEST(StableRewrites, Log1pWhenTheOneWidensTheShape) {
  const ir::Graph s = stabilise(trace_graph1(
      [](const std::vector<Tensor>& x) {
        return ops::log(x[0] + ops::ones({2, 3}));
      },
      {f32({3})}));
  EXPECT_EQ(op_names(s), "broadcast_to log1p");
}

TEST(StableRewrites, Log1pKeepsTheSumWhenItIsUsedElsewhere) {
  // log1p replaces the log one for one; the add stays for its other use.
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const Tensor y = x[0] + 1.0;
        return std::vector<Tensor>{ops::log(y), y * 2.0};
      },
      {f32({3})});
  const ir::Graph s = stabilise(g);
  EXPECT_EQ(count_op(s, "log1p"), 1u);
  EXPECT_EQ(count_op(s, "log"), 0u);
  EXPECT_EQ(count_op(s, "add"), 1u);
  expect_same_values(g, s, random_inputs(g, 2, 0.5, 2.0), 0.0, 1e-6);
}

TEST(StableRewrites, NotLog1pForOtherConstantsOrDtypes) {
  EXPECT_EQ(
      op_names(stabilise(trace_graph1([](const std::vector<Tensor>& x) { return ops::log(x[0] + 2.0); }, {f32({3})}))),
      "constant add log");
  // f32 + f64 one is f64: log1p(x) would be f32.
  EXPECT_EQ(
      op_names(stabilise(trace_graph1(
          [](const std::vector<Tensor>& x) { return ops::log(x[0] + Tensor::scalar(1.0, DType::f64)); }, {f32({3})}))),
      "constant add log");
}

TEST(StableRewrites, ExpMinusOneBecomesExpm1) {
  for (const Fn& fn : {Fn([](const std::vector<Tensor>& x) { return ops::exp(x[0]) - 1.0; }),
                       Fn([](const std::vector<Tensor>& x) { return ops::exp(x[0]) + (-1.0); }),
                       Fn([](const std::vector<Tensor>& x) { return -1.0 + ops::exp(x[0]); })}) {
    const ir::Graph g = trace_graph1(fn, {f32({3})});
    const ir::Graph s = stabilise(g);
    EXPECT_EQ(op_names(s), "expm1");
    expect_same_values(g, s, random_inputs(g, 1, 1.0, 3.0), 0.0, 1e-6);
    const std::vector<Array> tiny{Array::from_vector<float>({1e-10f, -2e-9f, 0}, {3})};
    EXPECT_EQ(run1(g, tiny)[0], 0.0);
    const std::vector<double> fixed = run1(s, tiny);
    EXPECT_NEAR(fixed[0], 1e-10, 1e-16);
    EXPECT_NEAR(fixed[1], -2e-9, 1e-15);
  }
}

TEST(StableRewrites, NotExpm1WhenExpIsUsedElsewhere) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const Tensor e = ops::exp(x[0]);
        return std::vector<Tensor>{e - 1.0, e * 3.0};
      },
      {f32({3})});
  EXPECT_EQ(count_op(stabilise(g), "expm1"), 0u);
}

TEST(StableRewrites, LogOfExpIsX) {
  const ir::Graph g = trace_graph1([](const std::vector<Tensor>& x) { return ops::log(ops::exp(x[0])); }, {f32({2})});
  const ir::Graph s = stabilise(g);
  EXPECT_TRUE(s.nodes().empty());
  const std::vector<Array> big{Array::from_vector<float>({100, -200}, {2})};
  EXPECT_TRUE(std::isinf(run1(g, big)[0]));  // exp(100) overflows f32
  EXPECT_EQ(run1(s, big), (std::vector<double>{100, -200}));
}

TEST(StableRewrites, LogSoftmaxFromLogOfSoftmax) {
  const ir::Graph g =
      trace_graph1([](const std::vector<Tensor>& x) { return ops::log(ops::softmax(x[0], -1)); }, {f32({2, 3})});
  const ir::Graph s = stabilise(g);
  EXPECT_EQ(op_names(s), "log_softmax");
  EXPECT_EQ(s.outputs()[0].node()->attrs().get_int("axis"), -1);
  expect_same_values(g, s, 4, 1e-6, 1e-6);
  // softmax underflows to 0 for a logit 200 below the rest; log(0) = -inf, log_softmax = -200.
  const std::vector<Array> far{Array::from_vector<float>({0, -200, 0, 5, 5, 5}, {2, 3})};
  EXPECT_TRUE(std::isinf(run1(g, far)[1]));
  EXPECT_NEAR(run1(s, far)[1], -200 - std::log(2.0), 1e-4);
}

TEST(StableRewrites, NotLogSoftmaxWhenSoftmaxIsUsedElsewhere) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const Tensor p = ops::softmax(x[0], 1);
        return std::vector<Tensor>{ops::log(p), p};
      },
      {f32({2, 3})});
  EXPECT_TRUE(same_graph(g, stabilise(g)));
}

TEST(StableRewrites, LogsumexpFromLogSumExp) {
  const ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) { return ops::log(ops::sum(ops::exp(x[0]), {1}, true)); }, {f32({2, 3})});
  const ir::Graph s = stabilise(g);
  EXPECT_EQ(op_names(s), "logsumexp");
  EXPECT_EQ(s.outputs()[0].node()->attrs().get_ints("axes"), (std::vector<int64_t>{1}));
  EXPECT_TRUE(s.outputs()[0].node()->attrs().get_bool("keepdims"));
  expect_same_values(g, s, 5, 1e-6, 1e-6);
  const std::vector<Array> big{Array::from_vector<float>({1000, 1000, 1000, -1, 0, 1}, {2, 3})};
  EXPECT_TRUE(std::isinf(run1(g, big)[0]));
  EXPECT_NEAR(run1(s, big)[0], 1000 + std::log(3.0), 1e-3);
}

TEST(StableRewrites, NotLogsumexpWhenExpIsUsedElsewhere) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& x) {
        const Tensor e = ops::exp(x[0]);
        return std::vector<Tensor>{ops::log(ops::sum(e, {1})), e};
      },
      {f32({2, 3})});
  EXPECT_TRUE(same_graph(g, stabilise(g)));
}

TEST(StableRewrites, LogOfPickedSoftmaxProbabilityBecomesPickedLogSoftmax) {
  // The naive NLL: pick each row's target probability, then take its log.
  const ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        const Tensor picked = ops::take_along_axis(ops::softmax(x[0], 1), ops::unsqueeze(x[1], 1), 1);
        return -ops::mean(ops::log(ops::squeeze(picked, {1})));
      },
      {f32({4, 5}), i64({4})});
  const ir::Graph s = stabilise(g);
  EXPECT_EQ(count_op(s, "softmax"), 0u);
  EXPECT_EQ(count_op(s, "log"), 0u);
  EXPECT_EQ(count_op(s, "log_softmax"), 1u);
  expect_same_values(g, s, random_inputs(g, 6, -1.0, 1.0, 5), 1e-6, 1e-6);
  // A target whose logit is 120 below the others: the naive loss is inf, the rewritten one finite.
  std::vector<float> logits(20, 0.0f);
  logits[0] = -120.0f;
  const std::vector<Array> far{Array::from_vector<float>(logits, {4, 5}),
                               Array::from_vector<int64_t>({0, 1, 2, 3}, {4})};
  EXPECT_TRUE(std::isinf(run1(g, far)[0]));
  // Row 0 loses 120 + log(4) (to within e^-120), the uniform rows log(5) each.
  EXPECT_NEAR(run1(s, far)[0], (120 + std::log(4.0) + 3 * std::log(5.0)) / 4, 1e-3);
}

TEST(StableRewrites, OneHotPickOfSoftmaxBecomesAGather) {
  const ir::Graph g = trace_graph1(
      [](const std::vector<Tensor>& x) {
        const Tensor prob = ops::sum(ops::softmax(x[0], -1) * ops::one_hot(x[1], 5), {-1});
        return -ops::mean(ops::log(prob));
      },
      {f32({4, 5}), i64({4})});
  const ir::Graph s = stabilise(g);
  EXPECT_EQ(count_op(s, "softmax") + count_op(s, "one_hot") + count_op(s, "log"), 0u) << op_names(s);
  EXPECT_EQ(count_op(s, "gather"), 1u);
  expect_same_values(g, s, random_inputs(g, 7, -1.0, 1.0, 5), 1e-6, 1e-6);
  std::vector<float> logits(20, 0.0f);
  logits[6] = -150.0f;  // row 1, class 1
  const std::vector<Array> far{Array::from_vector<float>(logits, {4, 5}),
                               Array::from_vector<int64_t>({0, 1, 2, 3}, {4})};
  EXPECT_TRUE(std::isinf(run1(g, far)[0]));
  EXPECT_TRUE(std::isfinite(run1(s, far)[0]));
}

TEST(StableRewrites, SoftmaxThenNllLossIsCrossEntropy) {
  // A hand-written softmax + NLL, after the default pipeline, is the graph ops::cross_entropy builds.
  const TypeList types{f32({8, 10}), i64({8})};
  const ir::Graph naive = trace_graph1(
      [](const std::vector<Tensor>& x) { return ops::nll_loss(ops::log(ops::softmax(x[0], 1)), x[1]); }, types);
  const ir::Graph builtin =
      trace_graph1([](const std::vector<Tensor>& x) { return ops::cross_entropy(x[0], x[1]); }, types);
  const ir::Graph a = passes::default_pipeline().run(naive);
  const ir::Graph b = passes::default_pipeline().run(builtin);
  EXPECT_EQ(ir::print_graph(a), ir::print_graph(b));
  EXPECT_EQ(count_op(a, "log_softmax"), 1u);
  expect_same_values(naive, a, random_inputs(naive, 8, -2.0, 2.0, 10), 1e-6, 1e-6);
}

TEST(StableRewrites, NeverLooksBehindAGraphInput) {
  // The softmax is a run-time input here; rewriting would reach for the unbound logits.
  const Tensor z = Tensor::placeholder("z", DType::f32, {2, 3});
  const Tensor p = ops::softmax(z, 1);
  const ir::Graph g = ir::Graph::build({p.value()}, {ops::log(p).value()});
  EXPECT_TRUE(same_graph(g, stabilise(g)));
}
