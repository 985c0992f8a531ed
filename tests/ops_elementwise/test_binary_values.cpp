// Binary ops, where and clamp: values against independent formulas in every floating dtype, special
// values, integer behaviour and the comparisons and logic ops.
#include "elementwise_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
struct BinaryCase {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> formula;
  double lo_a, hi_a, lo_b, hi_b;
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return ops::add(a, b); }, [](double a, double b) { return a + b; },
       -5, 5, -5, 5},
      {"sub", [](const Tensor& a, const Tensor& b) { return ops::sub(a, b); }, [](double a, double b) { return a - b; },
       -5, 5, -5, 5},
      {"mul", [](const Tensor& a, const Tensor& b) { return ops::mul(a, b); }, [](double a, double b) { return a * b; },
       -5, 5, -5, 5},
      {"div", [](const Tensor& a, const Tensor& b) { return ops::div(a, b); }, [](double a, double b) { return a / b; },
       -5, 5, 0.5, 5},
      {"pow", [](const Tensor& a, const Tensor& b) { return ops::pow(a, b); },
       [](double a, double b) { return std::exp(b * std::log(a)); }, 0.1, 4, -3, 3},
      {"maximum", [](const Tensor& a, const Tensor& b) { return ops::maximum(a, b); },
       [](double a, double b) { return a > b ? a : b; }, -5, 5, -5, 5},
      {"minimum", [](const Tensor& a, const Tensor& b) { return ops::minimum(a, b); },
       [](double a, double b) { return a < b ? a : b; }, -5, 5, -5, 5},
  };
}

std::vector<int64_t> bools(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::boolean);
  return t.to_vector<int64_t>();
}
}  // namespace

TEST(BinaryValues, EveryOpMatchesItsFormulaInEveryFloatingDtype) {
  uint64_t seed = 100;
  for (const BinaryCase& c : binary_cases()) {
    const std::vector<double> a = random_array({300}, seed++, c.lo_a, c.hi_a).to_f64();
    const std::vector<double> b = random_array({300}, seed++, c.lo_b, c.hi_b).to_f64();
    for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
      SCOPED_TRACE(c.name + " " + dtype_name(dt));
      const Tensor y = c.op(tensor_of(a, dt), tensor_of(b, dt));
      EXPECT_EQ(y.dtype(), dt);
      const std::vector<double> sa = stored_as(a, dt), sb = stored_as(b, dt);
      std::vector<double> want;
      for (size_t i = 0; i < sa.size(); ++i) want.push_back(c.formula(sa[i], sb[i]));
      const double rtol = tolerance_for(dt);
      expect_close(y, want, dt == DType::f64 ? 1e-14 : rtol * 1e-3, rtol);
    }
  }
}

TEST(BinaryValues, HandValuesAndSpecialCases) {
  const double inf = INFINITY;
  expect_close(ops::div(tensor_of({1, -1, 0, 6}), tensor_of({0, 0, 0, -4})), {inf, -inf, NAN, -1.5});
  expect_close(ops::pow(tensor_of({2, 0, -8, -2, 4, 0}), tensor_of({10, 0, 1.0 / 3, 3, 0.5, -1})),
               {1024, 1, NAN, -8, 2, inf});
  expect_close(ops::pow(tensor_of({3, -2}), 2.0), {9, 4});
  expect_close(ops::pow(tensor_of({inf, 2}), tensor_of({0, inf})), {1, inf});
  expect_close(ops::add(tensor_of({inf, inf}), tensor_of({-inf, 1})), {NAN, inf});
  expect_close(ops::mul(tensor_of({0, inf}), tensor_of({inf, -2})), {NAN, -inf});
  // maximum and minimum propagate NaN from either side (like np.maximum, unlike std::max).
  expect_close(ops::maximum(tensor_of({NAN, 1, 2}), tensor_of({1, NAN, -inf})), {NAN, NAN, 2});
  expect_close(ops::minimum(tensor_of({NAN, 1, 2}), tensor_of({1, NAN, -inf})), {NAN, NAN, -inf});
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    EXPECT_TRUE(std::isnan(ops::maximum(tensor_of({NAN}, dt), tensor_of({1}, dt)).item())) << dtype_name(dt);
    EXPECT_TRUE(std::isnan(ops::minimum(tensor_of({1}, dt), tensor_of({NAN}, dt)).item())) << dtype_name(dt);
    EXPECT_TRUE(std::isnan(ops::add(tensor_of({NAN}, dt), tensor_of({1}, dt)).item())) << dtype_name(dt);
  }
  // f16 arithmetic rounds each result once: 2048 + 1 is 2048, 65504 * 2 overflows.
  expect_close(ops::add(tensor_of({2048}, DType::f16), tensor_of({1}, DType::f16)), {2048});
  expect_close(ops::mul(tensor_of({65504}, DType::f16), tensor_of({2}, DType::f16)), {inf});
  expect_close(ops::add(tensor_of({256}, DType::bf16), tensor_of({1}, DType::bf16)), {256});
}

TEST(BinaryValues, IntegerArithmetic) {
  for (DType dt : {DType::i8, DType::i32, DType::i64, DType::u8}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor a = tensor_of({7, 9, 0}, dt), b = tensor_of({2, 3, 5}, dt);
    EXPECT_EQ(ops::add(a, b).dtype(), dt);
    EXPECT_EQ(ops::add(a, b).to_vector<int64_t>(), (std::vector<int64_t>{9, 12, 5}));
    EXPECT_EQ(ops::mul(a, b).to_vector<int64_t>(), (std::vector<int64_t>{14, 27, 0}));
    EXPECT_EQ(ops::maximum(a, b).to_vector<int64_t>(), (std::vector<int64_t>{7, 9, 5}));
    EXPECT_EQ(ops::minimum(a, b).to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 0}));
    // Division and pow of integers compute in f32.
    const Tensor q = ops::div(a, b);
    EXPECT_EQ(q.dtype(), DType::f32);
    expect_close(q, {3.5, 3, 0});
    const Tensor p = ops::pow(a, b);
    EXPECT_EQ(p.dtype(), DType::f32);
    expect_close(p, {49, 729, 0});
  }
  EXPECT_EQ(ops::sub(tensor_of({-3}, DType::i32), tensor_of({4}, DType::i32)).to_vector<int64_t>()[0], -7);
  EXPECT_EQ(ops::sub(tensor_of({3}, DType::u8), tensor_of({4}, DType::u8)).to_vector<int64_t>()[0], 255);  // wraps
  expect_close(ops::div(tensor_of({-7, 1}, DType::i32), tensor_of({2, 0}, DType::i32)), {-3.5, INFINITY});
  expect_close(ops::pow(tensor_of({2}, DType::i32), tensor_of({-1}, DType::i32)), {0.5});
}

// Integer add, sub and mul wrap on overflow like NumPy, without signed-overflow undefined behaviour
// (the sanitizer build of this test catches a regression).
TEST(BinaryValues, IntegerOverflowWrapsLikeNumPy) {
  const Tensor max32 = tensor_of({2147483647.0}, DType::i32), one32 = tensor_of({1}, DType::i32);
  EXPECT_EQ(ops::add(max32, one32).to_vector<int64_t>()[0], -2147483648LL);
  EXPECT_EQ(ops::sub(ops::neg(max32), tensor_of({2}, DType::i32)).to_vector<int64_t>()[0], 2147483647LL);
  EXPECT_EQ(ops::mul(tensor_of({65536}, DType::i32), tensor_of({65536}, DType::i32)).to_vector<int64_t>()[0], 0);
  const Tensor max64 = Tensor::from_vector<int64_t>({INT64_MAX}, {1});
  EXPECT_EQ(ops::add(max64, Tensor::from_vector<int64_t>({1}, {1})).to_vector<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(ops::add(tensor_of({100}, DType::i8), tensor_of({100}, DType::i8)).to_vector<int64_t>()[0], -56);
}

TEST(BinaryValues, Comparisons) {
  const Tensor a = tensor_of({1, 2, 3, NAN, INFINITY, -0.0});
  const Tensor b = tensor_of({2, 2, 2, NAN, INFINITY, 0.0});
  EXPECT_EQ(bools(ops::eq(a, b)), (std::vector<int64_t>{0, 1, 0, 0, 1, 1}));
  EXPECT_EQ(bools(ops::ne(a, b)), (std::vector<int64_t>{1, 0, 1, 1, 0, 0}));
  EXPECT_EQ(bools(ops::lt(a, b)), (std::vector<int64_t>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bools(ops::le(a, b)), (std::vector<int64_t>{1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(bools(ops::gt(a, b)), (std::vector<int64_t>{0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(bools(ops::ge(a, b)), (std::vector<int64_t>{0, 1, 1, 0, 1, 1}));
  // Mixed dtypes compare after promotion: u8 255 against i8 -1 compares in i32 (no wrap-around).
  EXPECT_EQ(bools(ops::gt(tensor_of({255}, DType::u8), tensor_of({-1}, DType::i8))), (std::vector<int64_t>{1}));
  EXPECT_EQ(bools(ops::eq(tensor_of({3}, DType::i32), tensor_of({3.0}, DType::f32))), (std::vector<int64_t>{1}));
  EXPECT_EQ(bools(ops::lt(tensor_of({1}, DType::f16), tensor_of({1.0001}, DType::f32))), (std::vector<int64_t>{1}));
  EXPECT_EQ(bools(ops::eq(tensor_of({1, 0}, DType::boolean), tensor_of({1, 1}, DType::boolean))),
            (std::vector<int64_t>{1, 0}));
  for (DType dt : {DType::f16, DType::bf16, DType::i8, DType::u8, DType::i64}) {
    EXPECT_EQ(bools(ops::le(tensor_of({1, 2}, dt), tensor_of({2, 1}, dt))), (std::vector<int64_t>{1, 0}))
        << dtype_name(dt);
  }
}

TEST(BinaryValues, Logical) {
  const Tensor p = tensor_of({1, 1, 0, 0}, DType::boolean), q = tensor_of({1, 0, 1, 0}, DType::boolean);
  EXPECT_EQ(bools(ops::logical_and(p, q)), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(bools(ops::logical_or(p, q)), (std::vector<int64_t>{1, 1, 1, 0}));
  // Numbers are true when non-zero (NaN included).
  EXPECT_EQ(bools(ops::logical_and(tensor_of({2, -1, 0, NAN}), tensor_of({0, 3, 1, 1}, DType::i32))),
            (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(bools(ops::logical_or(tensor_of({0, 0}, DType::u8), tensor_of({0, 7}, DType::i8))),
            (std::vector<int64_t>{0, 1}));
}

TEST(BinaryValues, Where) {
  const Tensor cond = tensor_of({1, 0, 1}, DType::boolean, {3, 1});
  const Tensor a = tensor_of({10, 20}, DType::i32, {1, 2});
  const Tensor b = Tensor::scalar(-1.5, DType::f32);
  const Tensor w = ops::where(cond, a, b);
  EXPECT_EQ(w.dtype(), DType::f32);  // i32 with f32
  expect_shape(w, {3, 2});
  expect_close(w, {10, 20, -1.5, -1.5, 10, 20});
  // NaN and infinity are selected like any other value; bool operands stay bool.
  expect_close(ops::where(tensor_of({1, 0}, DType::boolean), tensor_of({NAN, 1}), tensor_of({2, INFINITY})),
               {NAN, INFINITY});
  const Tensor wb = ops::where(tensor_of({1, 0}, DType::boolean), tensor_of({0, 0}, DType::boolean),
                               tensor_of({1, 1}, DType::boolean));
  EXPECT_EQ(wb.dtype(), DType::boolean);
  EXPECT_EQ(wb.to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  expect_close(ops::where(tensor_of({1, 0}, DType::boolean), tensor_of({1.5}, DType::f16), tensor_of({2}, DType::bf16)),
               {1.5, 2});  // f16 with bf16 -> f32
  EXPECT_EQ(ops::where(tensor_of({1}, DType::boolean), tensor_of({1}, DType::f16), tensor_of({2}, DType::bf16)).dtype(),
            DType::f32);
}

TEST(BinaryValues, Clamp) {
  const Tensor x = tensor_of({-3, -1, 0, 2, 5, NAN});
  expect_close(ops::clamp(x, -1.0, 2.0), {-1, -1, 0, 2, 2, NAN});
  expect_close(ops::clamp(x, 0.0, std::nullopt), {0, 0, 0, 2, 5, NAN});
  expect_close(ops::clamp(x, std::nullopt, 0.0), {-3, -1, 0, 0, 0, NAN});
  expect_close(ops::clamp(x, std::nullopt, std::nullopt), {-3, -1, 0, 2, 5, NAN});
  expect_close(ops::clamp(x, 1.0, 1.0), {1, 1, 1, 1, 1, NAN});
  expect_close(ops::clamp(tensor_of({-INFINITY, INFINITY}), -1.0, 1.0), {-1, 1});
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    const Tensor c = ops::clamp(tensor_of({-3, 0.25, 7}, dt), -0.5, 0.5);
    EXPECT_EQ(c.dtype(), dt);
    expect_close(c, {-0.5, 0.25, 0.5});
  }
  const Tensor ci = ops::clamp(tensor_of({-5, 0, 5, 100}, DType::i32), -2.0, 3.0);
  EXPECT_EQ(ci.dtype(), DType::i32);
  EXPECT_EQ(ci.to_vector<int64_t>(), (std::vector<int64_t>{-2, 0, 3, 3}));
  EXPECT_EQ(ops::clamp(tensor_of({0, 250}, DType::u8), 10.0, 200.0).to_vector<int64_t>(),
            (std::vector<int64_t>{10, 200}));
}

TEST(BinaryValues, ScalarOperators) {
  const Tensor x = tensor_of({1, 2, 4}, DType::f32);
  expect_close(x + 1.0, {2, 3, 5});
  expect_close(x - 1.0, {0, 1, 3});
  expect_close(x * 2.0, {2, 4, 8});
  expect_close(x / 2.0, {0.5, 1, 2});
  expect_close(1.0 + x, {2, 3, 5});
  expect_close(1.0 - x, {0, -1, -3});
  expect_close(2.0 * x, {2, 4, 8});
  expect_close(2.0 / x, {2, 1, 0.5});
  expect_close(-x, {-1, -2, -4});
  expect_close(x + x * x - x / x, {1, 5, 19});
  // Scalars take the tensor's dtype, so low-precision tensors stay low precision...
  const Tensor h = tensor_of({1}, DType::f16);
  EXPECT_EQ((h * 0.1).dtype(), DType::f16);
  EXPECT_EQ((h * 0.1).item(), static_cast<double>(static_cast<float>(f16_t(0.1f))));
  // ...integers stay integers for whole numbers, and a fraction makes the result floating.
  const Tensor i = tensor_of({3, 4}, DType::i32);
  EXPECT_EQ((i + 2.0).dtype(), DType::i32);
  EXPECT_EQ((i + 2.0).to_vector<int64_t>(), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ((i * 0.5).dtype(), DType::f32);
  expect_close(i * 0.5, {1.5, 2});
  EXPECT_EQ((i / 2.0).dtype(), DType::f32);
  expect_close(i / 2.0, {1.5, 2});
}

// A Python-style scalar that the tensor's dtype cannot hold (i32 + 1e10, u8 * -1, i8 + 200, bool + 1)
// must not be silently saturated: the result either keeps its value or the op fails naming it.
TEST(BinaryValues, ScalarsThatDoNotFitTheTensorDtype) {
  auto exact_or_error = [](const std::function<Tensor()>& make, const std::vector<double>& want,
                           const std::string& what) {
    try {
      const Tensor t = make();
      EXPECT_EQ(t.to_vector<double>(), want)
          << what << " gave " << t.to_string() << " (" << dtype_name(t.dtype()) << ")";
    } catch (const Error&) {
      // Rejecting the scalar is fine too.
    }
  };
  exact_or_error([] { return tensor_of({1}, DType::i32) + 1e10; }, {1e10 + 1}, "i32 + 1e10");
  exact_or_error([] { return tensor_of({3}, DType::u8) * -1.0; }, {-3}, "u8 * -1");
  exact_or_error([] { return tensor_of({3}, DType::i8) + 200.0; }, {203}, "i8 + 200");
  exact_or_error([] { return tensor_of({1, 0}, DType::boolean) + 1.0; }, {2, 1}, "bool + 1");
  exact_or_error([] { return 300.0 - tensor_of({1}, DType::u8); }, {299}, "300 - u8");
}
