// Unary ops against independent double-precision formulas, in every floating dtype, plus the
// integer behaviour of the ops that accept integers.
#include "elementwise_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
// 101 evenly spaced points and 100 random ones in [lo, hi].
std::vector<double> sample_domain(double lo, double hi, uint64_t seed) {
  std::vector<double> v;
  for (int i = 0; i <= 100; ++i) v.push_back(lo + (hi - lo) * i / 100.0);
  const std::vector<double> r = random_array({100}, seed, lo, hi).to_f64();
  v.insert(v.end(), r.begin(), r.end());
  return v;
}
}  // namespace

TEST(UnaryValues, EveryOpMatchesItsFormulaInEveryFloatingDtype) {
  uint64_t seed = 1;
  for (const UnaryCase& c : unary_cases()) {
    const std::vector<double> xs = sample_domain(c.lo, c.hi, seed++);
    for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
      SCOPED_TRACE(c.name + " " + dtype_name(dt));
      const Tensor y = c.op(tensor_of(xs, dt));
      EXPECT_EQ(y.dtype(), dt);
      expect_shape(y, {static_cast<int64_t>(xs.size())});
      const std::vector<double> in = stored_as(xs, dt);
      std::vector<double> want;
      for (double x : in) want.push_back(c.formula(x));
      const double rtol = tolerance_for(dt);
      expect_close(y, want, dt == DType::f64 ? 1e-14 : rtol * 1e-3, rtol);
    }
  }
}

TEST(UnaryValues, ShapesOfAnyRankAndStridedInputs) {
  // Rank 0, rank 6 and a transposed (non-contiguous) input all map element by element.
  const Tensor s = ops::exp(Tensor::scalar(1.0, DType::f64));
  expect_shape(s, {});
  EXPECT_DOUBLE_EQ(s.item(), std::exp(1.0));
  const Tensor r6 = ops::square(tensor_of({1, 2, 3, 4, 5, 6}, DType::f32, {1, 2, 1, 3, 1, 1}));
  expect_shape(r6, {1, 2, 1, 3, 1, 1});
  expect_close(r6, {1, 4, 9, 16, 25, 36});
  const Tensor t = ops::transpose(tensor_of({1, 2, 3, 4, 5, 6}, DType::f64, {2, 3}), 0, 1);
  expect_close(ops::neg(t), {-1, -4, -2, -5, -3, -6});
  expect_shape(ops::sin(ops::zeros({0, 3})), {0, 3});
  // A reversed view (negative stride) reads in logical order.
  expect_close(ops::sqrt(ops::slice(tensor_of({1, 4, 9, 16}), 0, 3, -5, -1)), {4, 3, 2, 1});
}

TEST(UnaryValues, HandValues) {
  expect_close(ops::exp(tensor_of({0, 1, -1})), {1, std::numbers::e, 1 / std::numbers::e}, 1e-15);
  expect_close(ops::log(tensor_of({1, std::numbers::e, 0.5})), {0, 1, -std::numbers::ln2}, 1e-15);
  expect_close(ops::sqrt(tensor_of({0, 4, 2})), {0, 2, std::numbers::sqrt2}, 1e-15);
  expect_close(ops::rsqrt(tensor_of({4, 0.25})), {0.5, 2}, 1e-15);
  expect_close(ops::reciprocal(tensor_of({4, -0.5})), {0.25, -2}, 1e-15);
  expect_close(ops::sigmoid(tensor_of({0})), {0.5}, 1e-15);
  expect_close(ops::tanh(tensor_of({0})), {0}, 1e-15);
  expect_close(ops::erf(tensor_of({0, 1})), {0, 0.8427007929497149}, 1e-15);
  expect_close(ops::gelu(tensor_of({0, 1, -1})), {0, 0.8413447460685429, -0.15865525393145707}, 1e-15);
  expect_close(ops::gelu(tensor_of({1}), true), {0.8411919906082768}, 1e-15);
  expect_close(ops::silu(tensor_of({1})), {0.7310585786300049}, 1e-15);
  expect_close(ops::softplus(tensor_of({0})), {std::numbers::ln2}, 1e-15);
  expect_close(ops::expm1(tensor_of({1e-10})), {1.00000000005e-10}, 0, 1e-15);  // no cancellation
  expect_close(ops::log1p(tensor_of({1e-10})), {9.9999999995e-11}, 0, 1e-15);
  expect_close(ops::leaky_relu(tensor_of({-2, 3})), {-0.02, 3}, 1e-15);        // default slope 0.01
  expect_close(ops::elu(tensor_of({-1, 2})), {std::exp(-1.0) - 1, 2}, 1e-15);  // default alpha 1
  // Rounding: halves go to the even neighbour; floor/ceil of negatives.
  expect_close(ops::round(tensor_of({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6})), {0, 2, 2, -0, -2, -2, 2, -3});
  expect_close(ops::floor(tensor_of({-1.5, 1.5, -0.0, 3})), {-2, 1, 0, 3});
  expect_close(ops::ceil(tensor_of({-1.5, 1.5, 0.2, 3})), {-1, 2, 1, 3});
  EXPECT_TRUE(std::signbit(ops::round(tensor_of({-0.4})).item()));  // keeps the sign of zero
  // f16 results are rounded once from the f32 computation: exp(1) in f16 is 2.71875.
  EXPECT_EQ(ops::exp(tensor_of({1}, DType::f16)).item(), 2.71875);
  EXPECT_EQ(ops::exp(tensor_of({1}, DType::bf16)).item(), 2.71875);
}

TEST(UnaryValues, IntegerInputsOfNumericOps) {
  for (DType dt : {DType::i8, DType::i32, DType::i64}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = tensor_of({-3, 0, 5}, dt);
    EXPECT_EQ(ops::neg(x).dtype(), dt);
    EXPECT_EQ(ops::neg(x).to_vector<int64_t>(), (std::vector<int64_t>{3, 0, -5}));
    EXPECT_EQ(ops::abs(x).to_vector<int64_t>(), (std::vector<int64_t>{3, 0, 5}));
    EXPECT_EQ(ops::sign(x).to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));
    EXPECT_EQ(ops::square(x).to_vector<int64_t>(), (std::vector<int64_t>{9, 0, 25}));
    EXPECT_EQ(ops::relu(x).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 5}));
    EXPECT_EQ(ops::relu(x).dtype(), dt);
  }
  const Tensor u = tensor_of({0, 1, 255}, DType::u8);
  EXPECT_EQ(ops::neg(u).to_vector<int64_t>(), (std::vector<int64_t>{0, 255, 1}));  // wraps, as NumPy
  EXPECT_EQ(ops::abs(u).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 255}));
  EXPECT_EQ(ops::sign(u).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(ops::square(tensor_of({16}, DType::u8)).to_vector<int64_t>(), (std::vector<int64_t>{0}));  // 256 wraps
  EXPECT_EQ(ops::abs(tensor_of({-128}, DType::i8)).to_vector<int64_t>(), (std::vector<int64_t>{-128}));
}

// Integer neg, abs and square wrap like NumPy, without signed-overflow undefined behaviour.
TEST(UnaryValues, IntegerOverflowWrapsLikeNumPy) {
  const Tensor big32 = tensor_of({2147483647.0, -2147483648.0, 65536}, DType::i32);
  EXPECT_EQ(ops::neg(big32).to_vector<int64_t>(), (std::vector<int64_t>{-2147483647, -2147483648LL, -65536}));
  EXPECT_EQ(ops::square(big32).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  const Tensor big64 = Tensor::from_vector<int64_t>({INT64_MIN, 3037000500}, {2});
  EXPECT_EQ(ops::neg(big64).to_vector<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(ops::abs(big64).to_vector<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(ops::square(big64).to_vector<int64_t>()[1], -9223372036709301616LL);  // 3037000500^2 - 2^64
}

TEST(UnaryValues, LogicalAndPredicates) {
  const Tensor x = tensor_of({0, -0.0, 1.5, NAN, INFINITY, -INFINITY});
  const Tensor notx = ops::logical_not(x);
  EXPECT_EQ(notx.dtype(), DType::boolean);
  EXPECT_EQ(notx.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 0, 0, 0, 0}));  // NaN is truthy
  EXPECT_EQ(ops::isnan(x).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(ops::isinf(x).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(ops::isnan(x).dtype(), DType::boolean);
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    const Tensor h = tensor_of({1, NAN, INFINITY}, dt);
    EXPECT_EQ(ops::isnan(h).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0})) << dtype_name(dt);
    EXPECT_EQ(ops::isinf(h).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1})) << dtype_name(dt);
    EXPECT_EQ(ops::isinf(tensor_of({1e6}, dt)).to_vector<int64_t>()[0], dt == DType::f16) << dtype_name(dt);
  }
  // Integers and bools: never NaN or inf; logical_not is "== 0".
  EXPECT_EQ(ops::isnan(tensor_of({1, 2}, DType::i32)).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(ops::isinf(tensor_of({1}, DType::u8)).to_vector<int64_t>(), (std::vector<int64_t>{0}));
  EXPECT_EQ(ops::logical_not(tensor_of({0, 7, -1}, DType::i8)).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(ops::logical_not(tensor_of({0, 1}, DType::boolean)).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(UnaryValues, CastSaturatesTruncatesAndRounds) {
  const Tensor x = tensor_of({1.7, -1.7, 1e10, -1e10, NAN, INFINITY, -INFINITY, 0.5}, DType::f32);
  const Tensor i8 = ops::cast(x, DType::i8);
  EXPECT_EQ(i8.dtype(), DType::i8);
  EXPECT_EQ(i8.to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 127, -128, 0, 127, -128, 0}));
  EXPECT_EQ(ops::cast(x, DType::u8).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 255, 0, 0, 255, 0, 0}));
  EXPECT_EQ(ops::cast(x, DType::i32).to_vector<int64_t>(),
            (std::vector<int64_t>{1, -1, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 0}));
  EXPECT_EQ(ops::cast(x, DType::i64).to_vector<int64_t>(),
            (std::vector<int64_t>{1, -1, 10000000000LL, -10000000000LL, 0, INT64_MAX, INT64_MIN, 0}));
  EXPECT_EQ(ops::cast(x, DType::boolean).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1}));
  // Narrowing floats round to nearest even and overflow to infinity.
  expect_close(ops::cast(tensor_of({0.1, 1e5, -1e5, 2049}, DType::f32), DType::f16),
               {0.0999755859375, INFINITY, -INFINITY, 2048});
  expect_close(ops::cast(tensor_of({1.0 + 1.0 / 256, 1e39}, DType::f64), DType::bf16), {1.0, INFINITY});
  expect_close(ops::cast(tensor_of({1e39, 1e-50}, DType::f64), DType::f32), {INFINITY, 0});
  // Integer narrowing wraps; bool becomes 0/1.
  EXPECT_EQ(ops::cast(tensor_of({300, -1}, DType::i32), DType::u8).to_vector<int64_t>(),
            (std::vector<int64_t>{44, 255}));
  expect_close(ops::cast(tensor_of({1, 0}, DType::boolean), DType::f32), {1, 0});
  // Casting to the same dtype returns the tensor itself (no node).
  const Tensor y = tensor_of({1});
  EXPECT_EQ(ops::cast(y, DType::f64).value(), y.value());
}

TEST(UnaryValues, StopGradientPassesValues) {
  const Tensor x = tensor_of({1, -2, 3}, DType::f32);
  const Tensor s = ops::stop_gradient(x);
  EXPECT_EQ(s.dtype(), DType::f32);
  expect_close(s, {1, -2, 3});
  EXPECT_EQ(ops::stop_gradient(tensor_of({1, 2}, DType::i32)).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}
