// Eager evaluation and PyTorch-style autograd on tensors: memoisation, backward accumulation,
// zero_grad, detach/stop_gradient and the leaf-only rule for requires_grad.
#include "ir_test_ops.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

Tensor counted(const Tensor& x) {
  return ir::make_node1("test.count", {x});
}

class Eager : public ::testing::Test {
 protected:
  void SetUp() override {
    register_ir_test_ops();
    test_count_calls = 0;
  }
};

}  // namespace

TEST_F(Eager, TensorsAreLazyUntilNeeded) {
  Tensor a = Tensor::from_vector<float>({1, 2}, {2});
  EXPECT_TRUE(a.is_evaluated());  // data leaves hold their value
  Tensor b = counted(a) * 3.0;
  EXPECT_FALSE(b.is_evaluated());
  EXPECT_EQ(test_count_calls, 0);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_TRUE(b.is_evaluated());
  EXPECT_EQ(test_count_calls, 1);
}

TEST_F(Eager, EvaluatedNodesAreNotRecomputed) {
  Tensor x = Tensor::from_vector<double>({1, -2, 3}, {3});
  Tensor y = counted(x);
  y.eval();
  EXPECT_TRUE(y.is_evaluated());
  EXPECT_EQ(test_count_calls, 1);
  const Array first = y.array();
  y.eval();
  (void)y.array();
  EXPECT_EQ(test_count_calls, 1);
  EXPECT_TRUE(y.array().shares_storage_with(first));
  // Later computations bind y's memoised value instead of re-running it.
  Tensor z = ops::exp(y) + y;
  Tensor w = y * y;
  expect_close(z, {std::exp(1.0) + 1, std::exp(-2.0) - 2, std::exp(3.0) + 3});
  expect_close(w, {1, 4, 9});
  EXPECT_EQ(test_count_calls, 1);
}

TEST_F(Eager, EvalOfSeveralTensorsSharesWork) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {2});
  Tensor shared = counted(x);
  Tensor p = shared + 1.0, q = shared * 2.0;
  eval({p, q, p});
  EXPECT_EQ(test_count_calls, 1);
  EXPECT_TRUE(p.is_evaluated());
  EXPECT_TRUE(q.is_evaluated());
  expect_close(p, {2, 3});
  expect_close(q, {2, 4});
  EXPECT_EQ(test_count_calls, 1);
  // Intermediate values computed on the way are not memoised: only requested ones are.
  EXPECT_FALSE(shared.is_evaluated());
}

TEST_F(Eager, MultiOutputNodesAreEvaluatedTogether) {
  Tensor x = Tensor::from_vector<float>({1.5f, -2.0f}, {2});
  const std::vector<ir::Value> parts = ir::make_node("test.split2", {counted(x)});
  Tensor first(parts[0]), second(parts[1]);
  EXPECT_EQ(second.to_vector<int64_t>(), (std::vector<int64_t>{1, -2}));
  EXPECT_TRUE(first.is_evaluated());  // both outputs of the node are stored at once
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(test_count_calls, 1);
}

TEST_F(Eager, EvaluatingAPlaceholderFails) {
  Tensor p = Tensor::placeholder("features", DType::f32, {2});
  EXPECT_TESSERA_ERROR((p + 1.0).eval(), "placeholder 'features'", "no data");
  EXPECT_TESSERA_ERROR(Tensor().eval(), "undefined");
}

TEST_F(Eager, BackwardAccumulatesAndZeroGradResets) {
  Tensor w = Tensor::from_vector<double>({1, 2, 3}, {3});
  Tensor b = Tensor::from_vector<double>({0.5}, {1});
  w.set_requires_grad();
  b.set_requires_grad();
  EXPECT_TRUE(w.requires_grad());
  EXPECT_FALSE(w.grad().defined());
  // loss1 = sum(w^2 * b) -> dw = 2 w b, db = sum(w^2)
  Tensor loss1 = ops::sum(ops::square(w) * b);
  loss1.backward();
  expect_close(w.grad(), {1, 2, 3});
  expect_close(b.grad(), {14});
  // A second, different loss adds to the stored gradients.
  Tensor loss2 = ops::sum(w * 10.0);
  loss2.backward();
  expect_close(w.grad(), {11, 12, 13});
  expect_close(b.grad(), {14});  // loss2 does not involve b: unchanged
  loss1.backward();
  expect_close(w.grad(), {12, 14, 16});
  expect_close(b.grad(), {28});
  w.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  expect_close(b.grad(), {28});
  loss2.backward();
  expect_close(w.grad(), {10, 10, 10});
  // Turning the flag off stops accumulation for that leaf.
  b.zero_grad();
  b.set_requires_grad(false);
  loss1.backward();
  EXPECT_FALSE(b.grad().defined());
  expect_close(w.grad(), {11, 12, 13});
}

TEST_F(Eager, BackwardOnlyReachesLeavesThatRequireGrad) {
  Tensor w = Tensor::from_vector<float>({2}, {1});
  Tensor c = Tensor::from_vector<float>({5}, {1});
  w.set_requires_grad();
  ops::sum(w * c).backward();
  expect_close(w.grad(), {5});
  EXPECT_FALSE(c.grad().defined());
  EXPECT_FALSE(c.requires_grad());
}

TEST_F(Eager, BackwardRejectsBadLosses) {
  Tensor w = Tensor::from_vector<float>({1, 2}, {2});
  w.set_requires_grad();
  EXPECT_TESSERA_ERROR((w * 2.0).backward(), "backward", "one-element", "f32[2]");
  Tensor plain = Tensor::from_vector<float>({1, 2}, {2});
  EXPECT_TESSERA_ERROR(ops::sum(plain).backward(), "backward", "no tensor that requires a gradient");
  Tensor iw = Tensor::from_vector<int32_t>({1}, {1});
  iw.set_requires_grad();
  EXPECT_TESSERA_ERROR(ops::sum(iw).backward(), "backward", "floating", "i");
}

TEST_F(Eager, SetRequiresGradOnANonLeafRaises) {
  Tensor a = Tensor::from_vector<float>({1, 2}, {2});
  Tensor b = a + a;
  EXPECT_TESSERA_ERROR(b.set_requires_grad(), "set_requires_grad", "leaf", "'add'");
  b.eval();  // evaluation does not turn it into a leaf
  EXPECT_TESSERA_ERROR(b.set_requires_grad(), "set_requires_grad", "'add'");
  EXPECT_TESSERA_ERROR(Tensor().set_requires_grad(), "set_requires_grad");
  EXPECT_FALSE(b.requires_grad());
}

TEST_F(Eager, DetachAndStopGradientBlockGradients) {
  Tensor w = Tensor::from_vector<double>({1, 2, 3}, {3});
  w.set_requires_grad();
  // d/dw sum(w * detach(w)) = detach(w) = w: the detached factor contributes nothing.
  ops::sum(w * w.detach()).backward();
  expect_close(w.grad(), {1, 2, 3});
  w.zero_grad();
  ops::sum(w * stop_gradient(w)).backward();
  expect_close(w.grad(), {1, 2, 3});
  w.zero_grad();
  ops::sum(w * w).backward();  // without detaching: 2w
  expect_close(w.grad(), {2, 4, 6});

  // Unevaluated tensors detach through a stop_gradient node; evaluated ones become fresh leaves.
  Tensor lazy = w * 2.0;
  Tensor lazy_detached = lazy.detach();
  EXPECT_EQ(lazy_detached.op_name(), "stop_gradient");
  expect_close(lazy_detached, {2, 4, 6});
  Tensor evaluated = (w * 3.0).eval();
  Tensor fresh = evaluated.detach();
  EXPECT_EQ(fresh.op_name(), "constant");
  EXPECT_TRUE(fresh.is_evaluated());
  expect_close(fresh, {3, 6, 9});

  // Functional grad: the stopped branch gives zero gradient.
  auto g = grad([](const std::vector<Tensor>& xs) {
    return ops::sum(ops::stop_gradient(ops::square(xs[0])) + xs[0] * 0.5);
  })({Tensor::from_vector<double>({4, 5}, {2})});
  expect_close(g[0], {0.5, 0.5});
  auto only_stopped = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::stop_gradient(xs[0])); })(
      {Tensor::from_vector<double>({4, 5}, {2})});
  expect_close(only_stopped[0], {0, 0});
}
