// Unary ops at special values: NaN propagation, infinities, signed zeros, large magnitudes where
// naive formulas overflow, the two GELU variants, and the errors for unsupported dtypes.
#include "elementwise_test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(UnarySpecial, NanPropagatesThroughEveryFloatingOp) {
  // NumPy's rule: a NaN input gives a NaN output. sign and relu are checked in their own tests below.
  for (const UnaryCase& c : unary_cases()) {
    if (c.name == "sign" || c.name == "relu") continue;
    for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
      const double y = c.op(tensor_of({NAN}, dt)).item();
      EXPECT_TRUE(std::isnan(y)) << c.name << "(nan) in " << dtype_name(dt) << " gave " << y;
    }
  }
}

// relu(nan) is nan, as np.maximum(nan, 0), torch.relu and jax.nn.relu: a vanishing NaN would hide
// divergence in training.
TEST(UnarySpecial, ReluOfNanIsNan) {
  for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    EXPECT_TRUE(std::isnan(ops::relu(tensor_of({NAN}, dt)).item())) << dtype_name(dt);
  }
}

// sign(nan) is nan, as NumPy documents and JAX does.
TEST(UnarySpecial, SignOfNanIsNan) {
  for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    EXPECT_TRUE(std::isnan(ops::sign(tensor_of({NAN}, dt)).item())) << dtype_name(dt);
  }
}

TEST(UnarySpecial, Infinities) {
  const double inf = INFINITY;
  for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = tensor_of({inf, -inf}, dt);
    expect_close(ops::exp(x), {inf, 0});
    expect_close(ops::expm1(x), {inf, -1});
    expect_close(ops::tanh(x), {1, -1});
    expect_close(ops::sigmoid(x), {1, 0});
    expect_close(ops::erf(x), {1, -1});
    expect_close(ops::softplus(x), {inf, 0});
    expect_close(ops::relu(x), {inf, 0});
    expect_close(ops::leaky_relu(x, 0.1), {inf, -inf});
    expect_close(ops::elu(x, 2.0), {inf, -2});
    expect_close(ops::abs(x), {inf, inf});
    expect_close(ops::neg(x), {-inf, inf});
    expect_close(ops::square(x), {inf, inf});
    expect_close(ops::sign(x), {1, -1});
    expect_close(ops::floor(x), {inf, -inf});
    expect_close(ops::ceil(x), {inf, -inf});
    expect_close(ops::round(x), {inf, -inf});
    expect_close(ops::reciprocal(x), {0, -0.0});
    expect_close(ops::sin(x), {NAN, NAN});
    expect_close(ops::sqrt(tensor_of({inf}, dt)), {inf});
    expect_close(ops::rsqrt(tensor_of({inf}, dt)), {0});
    expect_close(ops::log(tensor_of({inf, 0, -1}, dt)), {inf, -inf, NAN});
    expect_close(ops::log1p(tensor_of({-1, -2}, dt)), {-inf, NAN});
    expect_close(ops::sqrt(tensor_of({-1}, dt)), {NAN});
    expect_close(ops::reciprocal(tensor_of({0.0, -0.0}, dt)), {inf, -inf});
    expect_close(ops::rsqrt(tensor_of({0.0}, dt)), {inf});
    expect_close(ops::gelu(tensor_of({inf}, dt)), {inf});
    expect_close(ops::silu(tensor_of({inf}, dt)), {inf});
  }
}

TEST(UnarySpecial, SignedZeros) {
  const Tensor z = tensor_of({-0.0});
  EXPECT_TRUE(std::signbit(ops::neg(tensor_of({0.0})).item()));
  EXPECT_EQ(ops::sign(z).item(), 0.0);
  EXPECT_TRUE(std::signbit(ops::sqrt(z).item()));  // IEEE: sqrt(-0) = -0
  EXPECT_EQ(ops::exp(z).item(), 1.0);
}

// abs(-0.0) is +0.0, as IEEE fabs, NumPy and PyTorch (visible through 1/x or signbit).
TEST(UnarySpecial, AbsOfNegativeZeroIsPositiveZero) {
  for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    EXPECT_FALSE(std::signbit(ops::abs(tensor_of({-0.0}, dt)).item())) << dtype_name(dt);
  }
}

TEST(UnarySpecial, LargeMagnitudesDoNotOverflow) {
  for (DType dt : {DType::f64, DType::f32}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = tensor_of({1000, -1000, 88.0, -88.0}, dt);
    expect_close(ops::sigmoid(x), {1, 0, 1, std::exp(-88.0)}, 0, dt == DType::f64 ? 1e-14 : 1e-5);
    expect_close(ops::silu(x), {1000, -0.0, 88, -88 * std::exp(-88.0)}, 1e-30, dt == DType::f64 ? 1e-14 : 1e-5);
    expect_close(ops::softplus(x), {1000, 0, 88, std::exp(-88.0)}, 1e-30, dt == DType::f64 ? 1e-14 : 1e-5);
    expect_close(ops::tanh(x), {1, -1, 1, -1});
    expect_close(ops::gelu(x), {1000, 0, 88, 0}, 1e-30);
    expect_close(ops::gelu(x, true), {1000, 0, 88, 0}, 1e-30);
    expect_close(ops::elu(x), {1000, -1, 88, -1}, 1e-12);
  }
  // Deep in the tail the stable forms keep full relative precision.
  expect_close(ops::sigmoid(tensor_of({-100})), {3.7200759760208356e-44}, 0, 1e-13);
  expect_close(ops::softplus(tensor_of({-50})), {1.9287498479639178e-22}, 0, 1e-13);
  expect_close(ops::silu(tensor_of({-100})), {-100 * 3.7200759760208356e-44}, 0, 1e-13);
  // softplus is the identity above its threshold (in units of beta * x) and smooth below it.
  expect_close(ops::softplus(tensor_of({25, 19}), 1.0, 20.0), {25, std::log1p(std::exp(19.0))}, 0, 1e-15);
  expect_close(ops::softplus(tensor_of({15, 9}), 2.0, 20.0), {15, std::log1p(std::exp(18.0)) / 2}, 0, 1e-15);
  expect_close(ops::softplus(tensor_of({3}), 1.0, 2.0), {3});  // threshold 2: linear already at 3
  // In f16 the intermediate is f32, so only the final result overflows.
  expect_close(ops::exp(tensor_of({12}, DType::f16)), {INFINITY});
  expect_close(ops::square(tensor_of({300}, DType::f16)), {INFINITY});
  expect_close(ops::sigmoid(tensor_of({-10}, DType::f16)), {4.5397868702434395e-05}, 3e-8);  // an f16 subnormal
  expect_close(ops::sigmoid(tensor_of({-20}, DType::f16)), {0});  // below half the smallest f16 subnormal
  expect_close(ops::exp(tensor_of({80}, DType::bf16)), {std::exp(80.0)}, 0, 8e-3);  // bf16 has f32's range
}

TEST(UnarySpecial, GeluExactAndTanhDiffer) {
  std::vector<double> xs;
  for (int i = -800; i <= 800; ++i) xs.push_back(i / 100.0);
  const auto exact = ops::gelu(tensor_of(xs)).to_vector<double>();
  const auto approx = ops::gelu(tensor_of(xs), true).to_vector<double>();
  double max_diff = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(exact[i], gelu_exact_formula(xs[i]), 1e-15);
    EXPECT_NEAR(approx[i], gelu_tanh_formula(xs[i]), 1e-15);
    max_diff = std::max(max_diff, std::abs(exact[i] - approx[i]));
  }
  // The approximation is within 5e-4 of the exact function but not equal to it.
  EXPECT_GT(max_diff, 4e-4);
  EXPECT_LT(max_diff, 5e-4);
  EXPECT_NEAR(ops::gelu(tensor_of({1})).item() - ops::gelu(tensor_of({1}), true).item(), 1.5275546026616293e-4, 1e-15);
  // The attribute is recorded on the node.
  EXPECT_TRUE(ops::gelu(tensor_of({1}), true).value().node()->attrs().get_bool("approximate"));
  EXPECT_FALSE(ops::gelu(tensor_of({1})).value().node()->attrs().get_bool("approximate"));
}

TEST(UnarySpecial, FloatingOnlyOpsRejectIntegersNamingTheOp) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> float_only{
      {"exp", [](const Tensor& x) { return ops::exp(x); }},
      {"expm1", [](const Tensor& x) { return ops::expm1(x); }},
      {"log", [](const Tensor& x) { return ops::log(x); }},
      {"log1p", [](const Tensor& x) { return ops::log1p(x); }},
      {"sqrt", [](const Tensor& x) { return ops::sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return ops::rsqrt(x); }},
      {"reciprocal", [](const Tensor& x) { return ops::reciprocal(x); }},
      {"sin", [](const Tensor& x) { return ops::sin(x); }},
      {"cos", [](const Tensor& x) { return ops::cos(x); }},
      {"tanh", [](const Tensor& x) { return ops::tanh(x); }},
      {"erf", [](const Tensor& x) { return ops::erf(x); }},
      {"sigmoid", [](const Tensor& x) { return ops::sigmoid(x); }},
      {"leaky_relu", [](const Tensor& x) { return ops::leaky_relu(x); }},
      {"elu", [](const Tensor& x) { return ops::elu(x); }},
      {"gelu", [](const Tensor& x) { return ops::gelu(x); }},
      {"silu", [](const Tensor& x) { return ops::silu(x); }},
      {"softplus", [](const Tensor& x) { return ops::softplus(x); }},
      {"floor", [](const Tensor& x) { return ops::floor(x); }},
      {"ceil", [](const Tensor& x) { return ops::ceil(x); }},
      {"round", [](const Tensor& x) { return ops::round(x); }},
  };
  for (const auto& [name, op] : float_only) {
    for (DType dt : {DType::i32, DType::i64, DType::u8, DType::boolean}) {
      const std::string type = std::string(dtype_name(dt)) + "[2, 3]";
      EXPECT_TESSERA_ERROR(op(ops::zeros({2, 3}, dt)), "'" + name + "'", type, "floating", "cast");
    }
  }
}

TEST(UnarySpecial, NumericOpsRejectBool) {
  const Tensor b = ops::zeros({4}, DType::boolean);
  EXPECT_TESSERA_ERROR(ops::neg(b), "'neg'", "bool[4]", "numeric");
  EXPECT_TESSERA_ERROR(ops::abs(b), "'abs'", "bool[4]", "numeric");
  EXPECT_TESSERA_ERROR(ops::sign(b), "'sign'", "bool[4]");
  EXPECT_TESSERA_ERROR(ops::square(b), "'square'", "bool[4]");
  EXPECT_TESSERA_ERROR(ops::relu(b), "'relu'", "bool[4]");
}

TEST(UnarySpecial, AttributeErrors) {
  EXPECT_TESSERA_ERROR(ops::softplus(tensor_of({1}), 0.0), "softplus", "beta", "positive");
  EXPECT_TESSERA_ERROR(ops::softplus(tensor_of({1}), -1.0), "softplus", "beta");
  EXPECT_TESSERA_ERROR(ir::make_node1("elu", {tensor_of({1})}), "'elu'", "f64[1]",
                       "missing required attribute 'alpha'");
  EXPECT_TESSERA_ERROR(ir::make_node1("exp", {tensor_of({1})}, ir::Attrs{{"alpha", 1.0}}), "'exp'",
                       "unknown attribute 'alpha'");
  EXPECT_TESSERA_ERROR(ir::make_node1("gelu", {tensor_of({1})}, ir::Attrs{{"approximate", 1.0}}), "'gelu'",
                       "attribute 'approximate'");
  EXPECT_TESSERA_ERROR(ir::make_node1("exp", {tensor_of({1}), tensor_of({2})}), "'exp'", "expected 1 inputs, got 2");
}
