// Gradients of every differentiable elementwise op against central differences in f64 (inputs kept
// away from kinks and outside each op's domain edges), broadcasting gradients, gradient dtypes, the
// conventions at kinks and ties, and second derivatives of a few ops (gradcheck of a gradient).
#include "elementwise_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Array positive(const Shape& shape, uint64_t seed) {
  return random_array(shape, seed, 0.3, 2.0);
}

// The gradient of sum(f(xs)) with respect to argument `k`, as a function (for second derivatives).
Fn gradient_of(const Fn& f, size_t k) {
  return [f, k](const std::vector<Tensor>& xs) {
    return grad([f](const std::vector<Tensor>& ys) { return ops::sum(f(ys)); })(xs)[k];
  };
}
}  // namespace

TEST(ElementwiseGrad, EveryUnaryOp) {
  uint64_t seed = 300;
  for (const UnaryCase& c : unary_cases()) {
    Array input = away_from_kinks({2, 3}, seed++);
    if (c.name == "log" || c.name == "sqrt" || c.name == "rsqrt" || c.name == "reciprocal") {
      input = positive({2, 3}, seed++);
    } else if (c.name == "log1p") {
      input = random_array({2, 3}, seed++, -0.5, 2.0);
    }
    SCOPED_TRACE(c.name + " at " + input.to_string());
    auto op = c.op;
    EXPECT_GRADIENTS_MATCH([op](const std::vector<Tensor>& xs) { return op(xs[0]); }, std::vector<Array>{input});
  }
}

TEST(ElementwiseGrad, UnaryOpsOverWiderRanges) {
  // Tails and both branches of the piecewise ops, with explicit points.
  const Array wide = Array::from_vector<double>({-6.2, -3.3, -0.7, 0.4, 2.2, 5.3}, {6});
  for (const UnaryCase& c : unary_cases()) {
    if (c.name == "log" || c.name == "sqrt" || c.name == "rsqrt" || c.name == "reciprocal" || c.name == "log1p") {
      continue;
    }
    auto op = c.op;
    SCOPED_TRACE(c.name);
    EXPECT_GRADIENTS_MATCH([op](const std::vector<Tensor>& xs) { return op(xs[0]); }, std::vector<Array>{wide});
  }
  // softplus on both sides of a small threshold, with beta != 1 (threshold applies to beta * x).
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::softplus(xs[0], 2.0, 1.0); },
                         std::vector<Array>{Array::from_vector<double>({-1, 0.2, 0.45, 0.55, 3}, {5})});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::log(xs[0]); },
                         std::vector<Array>{Array::from_vector<double>({1e-3, 0.5, 100}, {3})});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::rsqrt(xs[0]); },
                         std::vector<Array>{Array::from_vector<double>({0.05, 1, 50}, {3})});
}

TEST(ElementwiseGrad, CastAndStopGradient) {
  // cast: the cotangent is cast back to the input dtype.
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::cast(ops::sin(ops::cast(xs[0], DType::f32)), DType::f64); },
      std::vector<Array>{random_array({4}, 7)},
      tessera::testing::GradCheckOptions{.eps = 1e-3, .atol = 1e-4, .rtol = 1e-3});
  const Tensor x = tensor_of({0.5, -1}, DType::f32);
  const auto g = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::cast(xs[0], DType::f64) * 3.0); })({x});
  EXPECT_EQ(g[0].dtype(), DType::f32);
  expect_close(g[0], {3, 3});
  // A cast through an integer type cuts the path: zero gradient.
  const auto gi = grad([](const std::vector<Tensor>& xs) {
    return ops::sum(ops::cast(ops::cast(xs[0], DType::i32), DType::f32) + xs[0] * 0.0);
  })({x});
  expect_close(gi[0], {0, 0});
  // stop_gradient passes the value but not the gradient.
  const auto gs = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::stop_gradient(xs[0]) * xs[0]); })(
      {tensor_of({2, 3})});
  expect_close(gs[0], {2, 3});
}

TEST(ElementwiseGrad, EveryBinaryOpSameShape) {
  const std::vector<std::pair<std::string, Fn>> ops_list{
      {"add", [](const std::vector<Tensor>& x) { return ops::add(x[0], x[1]); }},
      {"sub", [](const std::vector<Tensor>& x) { return ops::sub(x[0], x[1]); }},
      {"mul", [](const std::vector<Tensor>& x) { return ops::mul(x[0], x[1]); }},
      {"div", [](const std::vector<Tensor>& x) { return ops::div(x[0], x[1]); }},
      {"pow", [](const std::vector<Tensor>& x) { return ops::pow(x[0], x[1]); }},
      {"maximum", [](const std::vector<Tensor>& x) { return ops::maximum(x[0], x[1]); }},
      {"minimum", [](const std::vector<Tensor>& x) { return ops::minimum(x[0], x[1]); }},
  };
  uint64_t seed = 400;
  for (const auto& [name, fn] : ops_list) {
    SCOPED_TRACE(name);
    // pow needs a positive base for d/db; div a divisor away from zero.
    const Array a = name == "pow" ? positive({2, 3}, seed++) : random_array({2, 3}, seed++);
    const Array b = name == "div" ? positive({2, 3}, seed++) : random_array({2, 3}, seed++, -2, 2);
    EXPECT_GRADIENTS_MATCH(fn, (std::vector<Array>{a, b}));
  }
}

TEST(ElementwiseGrad, BinaryOpsWithBroadcasting) {
  // Gradients of broadcast operands are summed back to their own shapes.
  const std::vector<std::pair<Shape, Shape>> shapes{
      {{2, 3}, {3}}, {{2, 1, 3}, {4, 1}}, {{}, {2, 2}}, {{2, 1, 3, 1, 2}, {4, 1, 5, 1}}, {{3, 1}, {1, 3}}};
  uint64_t seed = 500;
  for (const auto& [sa, sb] : shapes) {
    SCOPED_TRACE(shape_str(sa) + " with " + shape_str(sb));
    const Array a = positive(sa, seed++), b = positive(sb, seed++);
    const std::vector<Array> in{a, b};
    EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::add(x[0], x[1]); }, in);
    EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::sub(x[0], x[1]); }, in);
    EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::mul(x[0], x[1]); }, in);
    EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::div(x[0], x[1]); }, in);
    EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::pow(x[0], x[1]); }, in);
    EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::maximum(x[0], x[1]); }, in);
    EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::minimum(x[0], x[1]); }, in);
  }
}

TEST(ElementwiseGrad, PowWithScalarExponentAndNegativeBase) {
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::pow(x[0], 2.5); },
                         std::vector<Array>{positive({5}, 1)});
  // An integer exponent on negative bases: d/da is defined (and d/db is taken as 0 there).
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& x) { return ops::pow(x[0], 3.0); },
                         std::vector<Array>{Array::from_vector<double>({-2, -0.5, 0.7, 1.5}, {4})});
  const auto g = grad([](const std::vector<Tensor>& x) { return ops::sum(ops::pow(x[0], x[1])); })(
      {tensor_of({-2, 0}), tensor_of({3, 2})});
  expect_close(g[0], {12, 0});
  expect_close(g[1], {0, 0});
}

TEST(ElementwiseGrad, WhereAndClamp) {
  const Tensor cond = tensor_of({1, 0, 0, 1, 1, 0}, DType::boolean, {2, 3});
  EXPECT_GRADIENTS_MATCH([cond](const std::vector<Tensor>& x) { return ops::where(cond, x[0], x[1]); },
                         (std::vector<Array>{random_array({2, 3}, 1), random_array({3}, 2)}));
  EXPECT_GRADIENTS_MATCH([cond](const std::vector<Tensor>& x) { return ops::where(cond, x[0] * x[0], x[1]); },
                         (std::vector<Array>{random_array({1, 3}, 3), random_array({2, 1}, 4)}));
  const Array x = Array::from_vector<double>({-2, -0.9, -0.3, 0.2, 0.8, 1.7}, {6});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& v) { return ops::clamp(v[0], -0.5, 0.5); },
                         std::vector<Array>{x});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& v) { return ops::clamp(v[0], 0.0, std::nullopt); },
                         std::vector<Array>{x});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& v) { return ops::clamp(v[0], std::nullopt, 1.0); },
                         std::vector<Array>{x});
  // The condition of where gets no gradient (it is bool); mixing in an integer operand is fine.
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& v) { return ops::add(v[0], v[1]); },
                         (std::vector<Array>{random_array({3}, 5), Array::from_vector<int32_t>({1, 2, 3}, {3})}));
}

TEST(ElementwiseGrad, ConventionsAtKinksAndTies) {
  const Tensor x = tensor_of({-1, 0, 2});
  auto grad_of = [&](const std::function<Tensor(const Tensor&)>& f) {
    return grad([f](const std::vector<Tensor>& xs) { return ops::sum(f(xs[0])); })({x})[0];
  };
  expect_close(grad_of([](const Tensor& t) { return ops::relu(t); }), {0, 0, 1});
  expect_close(grad_of([](const Tensor& t) { return ops::abs(t); }), {-1, 0, 1});
  expect_close(grad_of([](const Tensor& t) { return ops::leaky_relu(t, 0.1); }), {0.1, 0.1, 1});
  expect_close(grad_of([](const Tensor& t) { return ops::elu(t, 2.0); }), {2 * std::exp(-1.0), 2, 1});
  expect_close(grad_of([](const Tensor& t) { return ops::sign(t); }), {0, 0, 0});
  expect_close(grad_of([](const Tensor& t) { return ops::clamp(t, 0.0, 2.0); }), {0, 1, 1});
  // maximum/minimum split the gradient evenly at ties.
  const auto g = grad([](const std::vector<Tensor>& v) { return ops::sum(ops::maximum(v[0], v[1])); })(
      {tensor_of({1, 2, 3}), tensor_of({3, 2, 1})});
  expect_close(g[0], {0, 0.5, 1});
  expect_close(g[1], {1, 0.5, 0});
  const auto gm =
      grad([](const std::vector<Tensor>& v) { return ops::sum(ops::minimum(v[0], v[0])); })({tensor_of({1, 2})});
  expect_close(gm[0], {1, 1});
}

TEST(ElementwiseGrad, GradientDtypesFollowTheInputs) {
  // A mixed f32 * f64 product: each operand's gradient comes back in its own dtype.
  const Tensor a = tensor_of({1, 2}, DType::f32), b = tensor_of({3, 4}, DType::f64);
  const auto g = grad([](const std::vector<Tensor>& v) { return ops::sum(ops::mul(v[0], v[1])); })({a, b});
  EXPECT_EQ(g[0].dtype(), DType::f32);
  EXPECT_EQ(g[1].dtype(), DType::f64);
  expect_close(g[0], {3, 4});
  expect_close(g[1], {1, 2});
  // Half-precision gradients are computed and returned in the input's dtype.
  const Tensor h = tensor_of({0.5, 1}, DType::f16);
  const auto gh =
      grad([](const std::vector<Tensor>& v) { return ops::sum(ops::cast(ops::exp(v[0]), DType::f32)); })({h});
  EXPECT_EQ(gh[0].dtype(), DType::f16);
  expect_close(gh[0], {std::exp(0.5), std::exp(1.0)}, 0, 2e-3);
  // Broadcast gradients keep the operand's shape.
  const auto gb = grad([](const std::vector<Tensor>& v) { return ops::sum(ops::add(v[0], v[1])); })(
      {tensor_of({1, 2, 3}, DType::f64, {3, 1}), tensor_of({1, 2}, DType::f64, {1, 2})});
  expect_shape(gb[0], {3, 1});
  expect_shape(gb[1], {1, 2});
  expect_close(gb[0], {2, 2, 2});
  expect_close(gb[1], {3, 3});
}

TEST(ElementwiseGrad, SecondDerivatives) {
  const std::vector<std::pair<std::string, Fn>> unary{
      {"tanh", [](const std::vector<Tensor>& x) { return ops::tanh(x[0]); }},
      {"sigmoid", [](const std::vector<Tensor>& x) { return ops::sigmoid(x[0]); }},
      {"gelu", [](const std::vector<Tensor>& x) { return ops::gelu(x[0]); }},
      {"gelu_tanh", [](const std::vector<Tensor>& x) { return ops::gelu(x[0], true); }},
      {"silu", [](const std::vector<Tensor>& x) { return ops::silu(x[0]); }},
      {"softplus", [](const std::vector<Tensor>& x) { return ops::softplus(x[0], 1.5); }},
      {"erf", [](const std::vector<Tensor>& x) { return ops::erf(x[0]); }},
      {"elu", [](const std::vector<Tensor>& x) { return ops::elu(x[0], 0.7); }},
      {"exp", [](const std::vector<Tensor>& x) { return ops::exp(x[0]); }},
      {"sin", [](const std::vector<Tensor>& x) { return ops::sin(x[0]); }},
  };
  const Array x = away_from_kinks({2, 3}, 77);
  for (const auto& [name, f] : unary) {
    SCOPED_TRACE(name);
    EXPECT_GRADIENTS_MATCH(gradient_of(f, 0), std::vector<Array>{x});
  }
  const std::vector<std::pair<std::string, Fn>> positive_domain{
      {"log", [](const std::vector<Tensor>& v) { return ops::log(v[0]); }},
      {"sqrt", [](const std::vector<Tensor>& v) { return ops::sqrt(v[0]); }},
      {"rsqrt", [](const std::vector<Tensor>& v) { return ops::rsqrt(v[0]); }},
      {"reciprocal", [](const std::vector<Tensor>& v) { return ops::reciprocal(v[0]); }},
  };
  for (const auto& [name, f] : positive_domain) {
    SCOPED_TRACE(name);
    EXPECT_GRADIENTS_MATCH(gradient_of(f, 0), std::vector<Array>{positive({2, 3}, 78)});
  }
  // Two-argument ops: both rows of the Hessian, with broadcasting in the mix.
  const std::vector<std::pair<std::string, Fn>> binary{
      {"pow", [](const std::vector<Tensor>& v) { return ops::pow(v[0], v[1]); }},
      {"div", [](const std::vector<Tensor>& v) { return ops::div(v[0], v[1]); }},
      {"mul", [](const std::vector<Tensor>& v) { return ops::mul(ops::mul(v[0], v[0]), v[1]); }},
  };
  const std::vector<Array> ab{positive({2, 3}, 79), positive({3}, 80)};
  for (const auto& [name, f] : binary) {
    SCOPED_TRACE(name);
    EXPECT_GRADIENTS_MATCH(gradient_of(f, 0), ab);
    EXPECT_GRADIENTS_MATCH(gradient_of(f, 1), ab);
  }
  // A third derivative, for good measure: d3/dx3 tanh.
  EXPECT_GRADIENTS_MATCH(gradient_of(gradient_of(unary[0].second, 0), 0), std::vector<Array>{x});
}

TEST(ElementwiseGrad, SecondDerivativeValues) {
  // d2/dx2 tanh = -2 tanh (1 - tanh^2); d2/dx2 sigmoid = s (1 - s) (1 - 2 s); d2/da2 a^b = b (b-1) a^(b-2).
  const double v = 0.7;
  const Tensor x = tensor_of({v});
  auto second = [&](const Fn& f) { return grad(gradient_of(f, 0))({x})[0].item(); };
  const double t = std::tanh(v), s = 1 / (1 + std::exp(-v));
  EXPECT_NEAR(second([](const std::vector<Tensor>& a) { return ops::tanh(a[0]); }), -2 * t * (1 - t * t), 1e-12);
  EXPECT_NEAR(second([](const std::vector<Tensor>& a) { return ops::sigmoid(a[0]); }), s * (1 - s) * (1 - 2 * s),
              1e-12);
  EXPECT_NEAR(second([](const std::vector<Tensor>& a) { return ops::pow(a[0], 3.5); }), 3.5 * 2.5 * std::pow(v, 1.5),
              1e-12);
  // d2/dx2 gelu = pdf(x) (2 - x^2): the exact variant.
  const double pdf = std::exp(-v * v / 2) / std::sqrt(2 * std::numbers::pi);
  EXPECT_NEAR(second([](const std::vector<Tensor>& a) { return ops::gelu(a[0]); }), pdf * (2 - v * v), 1e-12);
  // d2/db2 of a / b = 2 a / b^3.
  const auto h = grad(gradient_of([](const std::vector<Tensor>& a) { return ops::div(a[0], a[1]); }, 1),
                      {1})({tensor_of({3}), tensor_of({2})});
  EXPECT_NEAR(h[0].item(), 2 * 3.0 / 8.0, 1e-12);
}
