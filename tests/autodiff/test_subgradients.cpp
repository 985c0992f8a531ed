// Gradients at ties and kinks, pinned to the values PyTorch 1.13 gives at the same points (printed by
// autograd for the same inputs). docs/ops.md's Conventions section states each rule.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

Tensor f64(const std::vector<double>& v, const Shape& s) {
  return Tensor::from_vector<double>(v, s);
}

// d sum(f(x)) / dx.
std::vector<double> grad_of(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  return grad([&](const std::vector<Tensor>& xs) { return ops::sum(f(xs[0])); })({x})[0].array().to_f64();
}

using V = std::vector<double>;

}  // namespace

// torch.amax / torch.amin: the gradient is split evenly between the tied maxima (minima).
TEST(Subgradients, MaxMinReductionsSplitTiesEvenly) {
  const Tensor x = f64({1, 3, 3, 2, 2, 2}, {2, 3});
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::max(t, {1}); }, x), (V{0, 0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
  const Tensor y = f64({1, 1, 3, 2, 2, 2}, {2, 3});
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::min(t, {1}); }, y), (V{0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
  // Over all axes (torch.max(x) of a tensor): [[1, 3, 3], [2, 0, 3]] has three tied maxima.
  const Tensor z = f64({1, 3, 3, 2, 0, 3}, {2, 3});
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::max(t); }, z), (V{0, 1.0 / 3, 1.0 / 3, 0, 0, 1.0 / 3}));
}

// torch.maximum / torch.minimum: a tie gives half to each operand.
TEST(Subgradients, MaximumMinimumSplitTiesInHalf) {
  const Tensor a = f64({1, 2, 3}, {3}), b = f64({1, 1, 4}, {3});
  auto both = [&](bool is_max) {
    return grad([is_max](const std::vector<Tensor>& xs) {
      return ops::sum(is_max ? ops::maximum(xs[0], xs[1]) : ops::minimum(xs[0], xs[1]));
    })({a, b});
  };
  const std::vector<Tensor> gmax = both(true), gmin = both(false);
  EXPECT_EQ(gmax[0].array().to_f64(), (V{0.5, 1, 0}));
  EXPECT_EQ(gmax[1].array().to_f64(), (V{0.5, 0, 1}));
  EXPECT_EQ(gmin[0].array().to_f64(), (V{0.5, 0, 1}));
  EXPECT_EQ(gmin[1].array().to_f64(), (V{0.5, 1, 0}));
}

// torch.clamp(x, -1, 1): the closed interval passes the gradient, bounds included.
TEST(Subgradients, ClampPassesTheGradientAtItsBounds) {
  const Tensor x = f64({-2, -1, 0, 1, 2}, {5});
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::clamp(t, -1.0, 1.0); }, x), (V{0, 1, 1, 1, 0}));
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::clamp(t, -1.0, std::nullopt); }, x), (V{0, 1, 1, 1, 1}));
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::clamp(t, std::nullopt, 1.0); }, x), (V{1, 1, 1, 1, 0}));
}

// torch.relu, F.leaky_relu(x, 0.1), F.elu and torch.abs at 0.
TEST(Subgradients, ActivationsAndAbsAtZero) {
  const Tensor x = f64({-1, 0, 1}, {3});
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::relu(t); }, x), (V{0, 0, 1}));
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::leaky_relu(t, 0.1); }, x), (V{0.1, 0.1, 1}));
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::elu(t, 0.5); }, f64({0, 1}, {2})), (V{0.5, 1}));
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::abs(t); }, x), (V{-1, 0, 1}));
}

// F.max_pool2d over an all-equal window: the first element in scan order takes the whole gradient.
TEST(Subgradients, MaxPoolTiesGoToTheFirstMaximum) {
  const Tensor x = f64({1, 1, 1, 1}, {1, 1, 2, 2});
  EXPECT_EQ(grad_of([](const Tensor& t) { return ops::max_pool2d(t, {2, 2}); }, x), (V{1, 0, 0, 0}));
}
