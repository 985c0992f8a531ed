// Second derivatives: Hessian-vector products checked against finite differences of the gradient,
// and grad-of-grad of tanh, x*sigmoid(x) and log-sum-exp against closed forms and gradient checks.
#include <cmath>

#include "gradcheck_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// f(x, W) = logsumexp(W x) + 0.25 * (x . x)^2 + sum(sin(x) * x): a scalar with a dense Hessian in x.
Tensor small_function(const std::vector<Tensor>& a) {
  const Tensor& x = a[0];
  Tensor wx = ops::matmul(a[1], x);
  return ops::logsumexp(wx, {0}) + ops::square(ops::sum(ops::square(x))) * 0.25 + ops::sum(ops::sin(x) * x);
}

std::vector<double> gradient_at(const Fn& f, const Array& x, const Array& w) {
  return grad(f, {0})({Tensor::from_array(x), Tensor::from_array(w)})[0].array().to_f64();
}

// H v by reverse-over-reverse: the gradient of <grad f(x), v> with respect to x.
std::vector<double> hvp(const Fn& f, const Array& x, const Array& w, const Array& v) {
  const Fn directional = [&](const std::vector<Tensor>& a) {
    return ops::sum(grad(f, {0})(a)[0] * Tensor::from_array(v));
  };
  return grad(directional, {0})({Tensor::from_array(x), Tensor::from_array(w)})[0].array().to_f64();
}

Array shifted(const Array& x, const Array& v, double eps) {
  std::vector<double> xs = x.to_f64();
  const std::vector<double> vs = v.to_f64();
  for (size_t i = 0; i < xs.size(); ++i) xs[i] += eps * vs[i];
  return Array::from_vector(xs, x.shape());
}

// d/dx of sum(grad f(x)) for an elementwise f: the second derivative at each element.
Tensor second_derivative(const Fn& f, const Tensor& x) {
  const Fn first = [&](const std::vector<Tensor>& a) { return ops::sum(grad(f)(a)[0]); };
  return grad(first)({x})[0];
}

}  // namespace

TEST(HigherOrder, HessianVectorProductMatchesFiniteDifferences) {
  const Array x = random_array({5}, 101), w = random_array({3, 5}, 102), v = random_array({5}, 103);
  const std::vector<double> hv = hvp(small_function, x, w, v);
  // Central differences of the (analytic) gradient along v.
  const double eps = 1e-5;
  const std::vector<double> gp = gradient_at(small_function, shifted(x, v, eps), w);
  const std::vector<double> gm = gradient_at(small_function, shifted(x, v, -eps), w);
  ASSERT_EQ(hv.size(), 5u);
  double norm = 0;
  for (size_t i = 0; i < hv.size(); ++i) {
    const double fd = (gp[i] - gm[i]) / (2 * eps);
    EXPECT_NEAR(hv[i], fd, 1e-7 + 1e-6 * std::abs(fd)) << "element " << i;
    norm += hv[i] * hv[i];
  }
  EXPECT_GT(norm, 1e-3);
}

TEST(HigherOrder, HessianIsSymmetric) {
  // e_i^T H e_j == e_j^T H e_i, each side from its own Hessian-vector product.
  const Array x = random_array({4}, 111), w = random_array({2, 4}, 112);
  std::vector<std::vector<double>> columns;
  for (int j = 0; j < 4; ++j) {
    std::vector<double> e(4, 0.0);
    e[static_cast<size_t>(j)] = 1.0;
    columns.push_back(hvp(small_function, x, w, Array::from_vector(e, {4})));
  }
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_NEAR(columns[i][j], columns[j][i], 1e-12) << i << "," << j;
  }
}

TEST(HigherOrder, GradientOfTheGradientPassesGradcheck) {
  // The gradient (as a function of x and W) differentiated again by the finite-difference checker:
  // this covers the full Hessian and the mixed x/W derivatives.
  const Fn gradient = [](const std::vector<Tensor>& a) { return grad(small_function, {0})(a)[0]; };
  EXPECT_GRADIENTS_MATCH(gradient, (std::vector<Array>{random_array({5}, 121), random_array({3, 5}, 122)}));
}

TEST(HigherOrder, TanhSecondAndThirdDerivatives) {
  const std::vector<double> xs{-2.0, -0.7, 0.0, 0.3, 1.1, 2.5};
  const Tensor x = Tensor::from_vector(xs, {6});
  const Fn f = [](const std::vector<Tensor>& a) { return ops::sum(ops::tanh(a[0])); };
  std::vector<double> d2, d3;
  for (double v : xs) {
    const double t = std::tanh(v), s = 1 - t * t;  // tanh' = sech^2
    d2.push_back(-2 * t * s);
    d3.push_back(-2 * s * s + 4 * t * t * s);
  }
  expect_close(second_derivative(f, x), d2, 1e-12, 1e-10);
  const Fn f2 = [&](const std::vector<Tensor>& a) { return ops::sum(second_derivative(f, a[0])); };
  expect_close(grad(f2)({x})[0], d3, 1e-12, 1e-10);
  const Fn first = [&](const std::vector<Tensor>& a) { return grad(f)(a)[0]; };
  EXPECT_GRADIENTS_MATCH(first, (std::vector<Array>{random_array({2, 3}, 131, -2, 2)}));
  EXPECT_GRADIENTS_MATCH([&](const std::vector<Tensor>& a) { return second_derivative(f, a[0]); },
                         (std::vector<Array>{random_array({4}, 132, -2, 2)}));
}

TEST(HigherOrder, XTimesSigmoidSecondDerivative) {
  const std::vector<double> xs{-3.0, -1.0, -0.2, 0.0, 0.5, 2.0};
  const Tensor x = Tensor::from_vector(xs, {6});
  const Fn f = [](const std::vector<Tensor>& a) { return ops::sum(ops::sigmoid(a[0]) * a[0]); };
  std::vector<double> d1, d2;
  for (double v : xs) {
    const double s = 1 / (1 + std::exp(-v));
    d1.push_back(s + v * s * (1 - s));
    d2.push_back(s * (1 - s) * (2 + v * (1 - 2 * s)));
  }
  expect_close(grad(f)({x})[0], d1, 1e-12, 1e-10);
  expect_close(second_derivative(f, x), d2, 1e-12, 1e-10);
  const Fn first = [&](const std::vector<Tensor>& a) { return grad(f)(a)[0]; };
  EXPECT_GRADIENTS_MATCH(first, (std::vector<Array>{random_array({3, 2}, 141, -3, 3)}));
  // silu is the same function as one op; its second derivative must agree.
  const Fn g = [](const std::vector<Tensor>& a) { return ops::sum(ops::silu(a[0])); };
  expect_close(second_derivative(g, x), d2, 1e-12, 1e-10);
}

TEST(HigherOrder, LogSumExpHessian) {
  // grad lse(x) = p = softmax(x); Hessian = diag(p) - p p^T, so H v = p * v - p (p . v).
  const std::vector<double> xs{0.3, -1.2, 2.0, 0.7};
  const std::vector<double> vs{1.0, -0.5, 0.25, 2.0};
  const Fn f = [](const std::vector<Tensor>& a) { return ops::logsumexp(a[0], {0}); };
  double z = 0;
  for (double v : xs) z += std::exp(v);
  std::vector<double> p;
  for (double v : xs) p.push_back(std::exp(v) / z);
  double pv = 0;
  for (size_t i = 0; i < 4; ++i) pv += p[i] * vs[i];
  std::vector<double> expected;
  for (size_t i = 0; i < 4; ++i) expected.push_back(p[i] * vs[i] - p[i] * pv);

  const Tensor x = Tensor::from_vector(xs, {4});
  expect_close(grad(f)({x})[0], p, 1e-14, 1e-12);
  const Tensor v = Tensor::from_vector(vs, {4});
  const Fn directional = [&](const std::vector<Tensor>& a) { return ops::sum(grad(f)(a)[0] * v); };
  expect_close(grad(directional)({x})[0], expected, 1e-12, 1e-10);

  // Batched over rows, with keepdims, gradient-checked twice over.
  const Fn rows = [](const std::vector<Tensor>& a) { return ops::sum(ops::logsumexp(a[0], {1}, true)); };
  const Fn rows_grad = [&](const std::vector<Tensor>& a) { return grad(rows)(a)[0]; };
  EXPECT_GRADIENTS_MATCH(rows_grad, (std::vector<Array>{random_array({3, 4}, 151, -3, 3)}));
  // The gradient rows are softmax rows: they sum to one.
  expect_close(ops::sum(rows_grad({Tensor::from_array(random_array({3, 4}, 152))}), {1}), {1, 1, 1}, 1e-12);
}

TEST(HigherOrder, SecondDerivativesOfAMlpLoss) {
  // Hessian-vector product of a tanh MLP loss with respect to its first-layer weights.
  const Fn loss = [](const std::vector<Tensor>& a) {
    Tensor h = ops::tanh(ops::matmul(a[1], a[0]));
    return ops::mean(ops::square(ops::matmul(h, a[2])));
  };
  const Array w1 = random_array({3, 4}, 161), x = random_array({2, 3}, 162), w2 = random_array({4, 1}, 163);
  const Array v = random_array({3, 4}, 164);
  auto grad_w1 = [&](const Array& w) {
    return grad(loss, {0})({Tensor::from_array(w), Tensor::from_array(x), Tensor::from_array(w2)})[0].array().to_f64();
  };
  const Fn directional = [&](const std::vector<Tensor>& a) {
    return ops::sum(grad(loss, {0})(a)[0] * Tensor::from_array(v));
  };
  const std::vector<double> hv =
      grad(directional, {0})({Tensor::from_array(w1), Tensor::from_array(x), Tensor::from_array(w2)})[0]
          .array()
          .to_f64();
  const double eps = 1e-5;
  const std::vector<double> gp = grad_w1(shifted(w1, v, eps)), gm = grad_w1(shifted(w1, v, -eps));
  for (size_t i = 0; i < hv.size(); ++i) {
    const double fd = (gp[i] - gm[i]) / (2 * eps);
    EXPECT_NEAR(hv[i], fd, 1e-7 + 1e-6 * std::abs(fd)) << "element " << i;
  }
}
