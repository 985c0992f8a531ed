// Gradients of the reductions: hand-computed cases (ties, zeros) and finite-difference checks in f64,
// including second derivatives.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

std::vector<Tensor> grad_of(const Fn& f, const std::vector<Tensor>& xs) {
  return grad(f)(xs);
}

const std::vector<std::pair<std::vector<int64_t>, bool>> kAxisCases = {{{}, false},     {{0}, false}, {{-1}, true},
                                                                       {{0, 2}, false}, {{-2}, true}, {{1, -1}, true}};
}  // namespace

TEST(ReduceGrad, MeanMaxMinLogsumexpGradcheck) {
  const Array x = random_array({2, 3, 4}, 1, -2, 2);
  for (const auto& [axes, keepdims] : kAxisCases) {
    const auto ax = axes;
    const bool kd = keepdims;
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::mean(xs[0], ax, kd); },
                           std::vector<Array>{x});
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::max(xs[0], ax, kd); },
                           std::vector<Array>{x});
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::min(xs[0], ax, kd); },
                           std::vector<Array>{x});
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::logsumexp(xs[0], ax, kd); },
                           std::vector<Array>{x});
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::prod(xs[0], ax, kd); },
                           std::vector<Array>{x});
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::var(xs[0], ax, 1, kd); },
                           std::vector<Array>{x});
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::std(xs[0], ax, 0, kd); },
                           std::vector<Array>{x});
  }
}

TEST(ReduceGrad, RankFive) {
  const Array x = random_array({2, 1, 3, 2, 2}, 2, 0.5, 1.5);
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::mean(xs[0], {-1, 0});
      },
      std::vector<Array>{x});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::max(xs[0], {-1, 0}, true);
      },
      std::vector<Array>{x});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::logsumexp(xs[0], {2, 4});
      },
      std::vector<Array>{x});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::prod(xs[0], {-3, -4});
      },
      std::vector<Array>{x});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::var(xs[0], {1, 2, 3});
      },
      std::vector<Array>{x});
}

TEST(ReduceGrad, MaxTiesSplitEvenly) {
  Tensor x = Tensor::from_vector<double>({3, 1, 3, 2, 5, 5, 5, 0}, {2, 4});
  auto g = grad_of([](const std::vector<Tensor>& xs) { return ops::sum(ops::max(xs[0], {1})); }, {x});
  expect_close(g[0], {0.5, 0, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0});
  auto gm = grad_of([](const std::vector<Tensor>& xs) { return ops::min(xs[0]); }, {x});
  expect_close(gm[0], {0, 0, 0, 0, 0, 0, 0, 1});
  // Scaled cotangent and all axes: three maxima of 5 share it.
  auto ga = grad_of([](const std::vector<Tensor>& xs) { return ops::max(xs[0]) * 6.0; }, {x});
  expect_close(ga[0], {0, 0, 0, 0, 2, 2, 2, 0});
}

TEST(ReduceGrad, MeanIsUniform) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto g = grad_of(
      [](const std::vector<Tensor>& xs) { return ops::sum(ops::mean(xs[0], {1}) * ops::mean(xs[0], {1})); }, {x});
  // d/dx_ij (m_i^2) = 2 m_i / 3 with m = [2, 5].
  expect_close(g[0], {4.0 / 3, 4.0 / 3, 4.0 / 3, 10.0 / 3, 10.0 / 3, 10.0 / 3}, 1e-12);
}

TEST(ReduceGrad, ProdWithZeros) {
  const Fn f = [](const std::vector<Tensor>& xs) { return ops::sum(ops::prod(xs[0], {1})); };
  // Rows: no zero, one zero, two zeros, a zero at the end.
  Tensor x = Tensor::from_vector<double>({2, 3, 4, 2, 0, 4, 0, 0, 3, 5, -1, 0}, {4, 3});
  auto g = grad_of(f, {x});
  expect_close(g[0], {12, 8, 6, 0, 8, 0, 0, 0, 0, 0, 0, -5}, 1e-12);
  // Gradient checks around a single zero (finite differences stay on one side of each branch).
  Array z = random_array({3, 4}, 3, 0.5, 2);
  Array z2 = Array::from_vector<double>(
      [&] {
        std::vector<double> v = z.to_f64();
        v[1] = 0;  // row 0 has one zero
        return v;
      }(),
      {3, 4});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::prod(xs[0], {1}); }, std::vector<Array>{z2});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::prod(xs[0]); }, std::vector<Array>{z2});
}

TEST(ReduceGrad, LogsumexpIsSoftmax) {
  Tensor x = Tensor::from_vector<double>({0, std::log(3.0), 1000, 1000}, {2, 2});
  auto g = grad_of([](const std::vector<Tensor>& xs) { return ops::sum(ops::logsumexp(xs[0], {1})); }, {x});
  expect_close(g[0], {0.25, 0.75, 0.5, 0.5}, 1e-12);
}

TEST(ReduceGrad, LogsumexpSecondDerivative) {
  // d/dx of sum(softmax(x) * w) checked by finite differences: exercises logsumexp's VJP as a graph.
  const Fn f = [](const std::vector<Tensor>& xs) { return ops::sum(ops::logsumexp(xs[0], {-1}) * xs[1]); };
  const Fn df = [f](const std::vector<Tensor>& xs) { return grad(f)(xs)[0]; };
  EXPECT_GRADIENTS_MATCH(df, (std::vector<Array>{random_array({3, 4}, 4, -2, 2), random_array({3}, 5)}));
  // Hessian of logsumexp of a vector is diag(p) - p p^T: check one row by hand with x = [0, log 3].
  Tensor x = Tensor::from_vector<double>({0, std::log(3.0)}, {2});
  const Fn first = [](const std::vector<Tensor>& xs) { return ops::logsumexp(xs[0]); };
  auto h =
      grad([first](const std::vector<Tensor>& xs) { return ops::sum(ops::slice(grad(first)(xs)[0], 0, 0, 1)); })({x});
  // p = [1/4, 3/4]: row 0 of the Hessian is [p0 - p0^2, -p0 p1] = [3/16, -3/16].
  expect_close(h[0], {3.0 / 16, -3.0 / 16}, 1e-12);
}

TEST(ReduceGrad, VarStdSecondDerivative) {
  const Fn f = [](const std::vector<Tensor>& xs) {
    return ops::sum(ops::std(xs[0], {1}) * ops::var(xs[0], {1}, 0)) + ops::sum(ops::std(xs[0], {0}));
  };
  const Fn df = [f](const std::vector<Tensor>& xs) { return grad(f)(xs)[0]; };
  EXPECT_GRADIENTS_MATCH(df, std::vector<Array>{random_array({3, 4}, 6, -2, 2)});
}

TEST(ReduceGrad, ProdAndMaxSecondDerivative) {
  const Fn f = [](const std::vector<Tensor>& xs) { return ops::sum(ops::prod(xs[0], {1}) * ops::max(xs[0], {0})); };
  const Fn df = [f](const std::vector<Tensor>& xs) { return grad(f)(xs)[0]; };
  EXPECT_GRADIENTS_MATCH(df, std::vector<Array>{random_array({3, 3}, 7, 0.5, 2)});
}

TEST(ReduceGrad, Cumsum) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4}, {4});
  Tensor w = Tensor::from_vector<double>({1, 10, 100, 1000}, {4});
  auto g = grad_of([w](const std::vector<Tensor>& xs) { return ops::sum(ops::cumsum(xs[0], 0) * w); }, {x});
  // x_i feeds outputs i..3: gradient is the reversed running sum of w.
  expect_close(g[0], {1111, 1110, 1100, 1000});
  auto gr = grad_of([w](const std::vector<Tensor>& xs) { return ops::sum(ops::cumsum(xs[0], 0, true) * w); }, {x});
  expect_close(gr[0], {1, 11, 111, 1111});
  for (int64_t axis : {0, 1, -1, 3}) {
    for (bool reverse : {false, true}) {
      EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::cumsum(xs[0], axis, reverse); },
                             std::vector<Array>{random_array({2, 3, 1, 4}, 8)});
    }
  }
  const Fn f = [](const std::vector<Tensor>& xs) { return ops::sum(ops::square(ops::cumsum(xs[0], 1))); };
  EXPECT_GRADIENTS_MATCH([f](const std::vector<Tensor>& xs) { return grad(f)(xs)[0]; },
                         std::vector<Array>{random_array({2, 3}, 9)});
}

TEST(ReduceGrad, GradientDtypesFollowInputs) {
  Tensor x = ops::ones({2, 3}, DType::f32);
  auto g = grad_of(
      [](const std::vector<Tensor>& xs) {
        return ops::mean(xs[0]) + ops::max(xs[0]) + ops::logsumexp(xs[0]) + ops::prod(xs[0]) + ops::var(xs[0]) +
               ops::sum(ops::cumsum(xs[0], 1));
      },
      {x});
  EXPECT_EQ(g[0].dtype(), DType::f32);
  expect_shape(g[0], {2, 3});
  Tensor h = ops::ones({4}, DType::f16);
  auto gh = grad_of(
      [](const std::vector<Tensor>& xs) { return ops::cast(ops::var(xs[0]) + ops::mean(xs[0]), DType::f32); }, {h});
  EXPECT_EQ(gh[0].dtype(), DType::f16);
  expect_close(gh[0], {0.25, 0.25, 0.25, 0.25}, 1e-3);
}
