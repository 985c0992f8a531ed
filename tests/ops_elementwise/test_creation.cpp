// Creation ops (full, zeros, ones, *_like, arange, eye, scalar_like): values, dtypes, that they are
// graph nodes rather than baked constants, and their errors.
#include "elementwise_test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Creation, FullZerosOnes) {
  const Tensor f = ops::full({2, 3}, 2.5);
  EXPECT_EQ(f.dtype(), DType::f32);
  expect_shape(f, {2, 3});
  expect_close(f, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5});
  EXPECT_EQ(f.op_name(), "full");  // a node, not a constant
  EXPECT_EQ(f.value().node()->attrs().get_float("value"), 2.5);
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor z = ops::zeros({3, 1, 2}, dt), o = ops::ones({4}, dt);
    EXPECT_EQ(z.dtype(), dt);
    EXPECT_EQ(o.dtype(), dt);
    EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
    EXPECT_EQ(o.to_vector<double>(), std::vector<double>(4, 1.0));
  }
  expect_shape(ops::zeros({}), {});
  EXPECT_EQ(ops::ones({}).item(), 1.0);
  EXPECT_EQ(ops::zeros({0, 5}).numel(), 0);
  expect_shape(ops::ones({1, 1, 1, 1, 1, 1, 2}), {1, 1, 1, 1, 1, 1, 2});
  // Values are converted to the dtype: rounded for f16, truncated for integers, 0/1 for bool.
  expect_close(ops::full({1}, 0.1, DType::f16), {0.0999755859375});
  EXPECT_EQ(ops::full({1}, -2.7, DType::i32).to_vector<int64_t>(), (std::vector<int64_t>{-2}));
  EXPECT_EQ(ops::full({2}, 5, DType::boolean).to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  expect_close(ops::full({2}, NAN, DType::f64), {NAN, NAN});
  expect_close(ops::full({1}, -INFINITY, DType::bf16), {-INFINITY});
}

TEST(Creation, LikeVariantsKeepShapeAndDtype) {
  const Tensor x = tensor_of({1, 2, 3, 4, 5, 6}, DType::f16, {3, 2});
  for (const Tensor& t : {ops::zeros_like(x), ops::ones_like(x), ops::full_like(x, 7)}) {
    EXPECT_EQ(t.dtype(), DType::f16);
    expect_shape(t, {3, 2});
  }
  expect_close(ops::full_like(x, 7), std::vector<double>(6, 7.0));
  expect_close(ops::ones_like(tensor_of({1, 2}, DType::i8)), {1, 1});
  EXPECT_EQ(ops::zeros_like(tensor_of({1, 2}, DType::i8)).dtype(), DType::i8);
  // full_like does not depend on its argument's values, so no gradient flows through it.
  const Tensor v = tensor_of({1, 2});
  auto g = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::full_like(xs[0], 3.0) * 2.0 + xs[0]); })({v});
  expect_close(g[0], {1, 1});
}

TEST(Creation, Arange) {
  const Tensor a = ops::arange(5);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(a.op_name(), "arange");
  const Tensor f = ops::arange(0, 1, 0.25);
  EXPECT_EQ(f.dtype(), DType::f32);
  expect_close(f, {0, 0.25, 0.5, 0.75});
  expect_close(ops::arange(5, 0, -1.5, DType::f64), {5, 3.5, 2, 0.5});
  expect_close(ops::arange(-3, 3, 2, DType::f64), {-3, -1, 1});
  // Elements are start + i * step (not a running sum), so 1.0, 1.1, ..., 1.9: ten of them.
  const auto tenths = ops::arange(1.0, 2.0, 0.1, DType::f64).to_vector<double>();
  ASSERT_EQ(tenths.size(), 10u);
  for (size_t i = 0; i < tenths.size(); ++i) EXPECT_EQ(tenths[i], 1.0 + static_cast<double>(i) * 0.1) << i;
  EXPECT_EQ(ops::arange(0, 0).numel(), 0);
  EXPECT_EQ(ops::arange(3, 0).numel(), 0);  // positive step going down: empty
  EXPECT_EQ(ops::arange(0, 3, -1).numel(), 0);
  EXPECT_EQ(ops::arange(int64_t{0}).numel(), 0);
  EXPECT_EQ(ops::arange(0, 5, 2, DType::i32).to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(ops::arange(0.5, 3, 1, DType::i32).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ops::arange(3, DType::u8).dtype(), DType::u8);
  expect_close(ops::arange(0, 3, 1, DType::f16), {0, 1, 2});
  EXPECT_TESSERA_ERROR(ops::arange(0, 1, 0), "arange", "step", "non-zero");
  EXPECT_TESSERA_ERROR(ops::arange(0, 1, NAN), "arange", "step");
  EXPECT_TESSERA_ERROR(ops::arange(0, INFINITY, 1), "arange", "finite");
  EXPECT_TESSERA_ERROR(ops::arange(NAN, 1, 1), "arange", "finite");
  EXPECT_TESSERA_ERROR(ops::arange(0, 1e30, 1), "arange", "too many");
}

TEST(Creation, Eye) {
  const Tensor e = ops::eye(3);
  EXPECT_EQ(e.dtype(), DType::f32);
  expect_shape(e, {3, 3});
  expect_close(e, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  EXPECT_EQ(e.op_name(), "eye");
  expect_close(ops::eye(2, 3), {1, 0, 0, 0, 1, 0});
  expect_close(ops::eye(3, 2), {1, 0, 0, 1, 0, 0});
  expect_close(ops::eye(2, 3, 1), {0, 1, 0, 0, 0, 1});
  expect_close(ops::eye(3, 2, -1), {0, 0, 1, 0, 0, 1});
  expect_close(ops::eye(2, 2, 2), {0, 0, 0, 0});
  expect_close(ops::eye(2, 2, -5), {0, 0, 0, 0});
  expect_shape(ops::eye(0), {0, 0});
  expect_shape(ops::eye(2, 0), {2, 0});
  const Tensor ei = ops::eye(2, -1, 0, DType::i32);
  EXPECT_EQ(ei.dtype(), DType::i32);
  EXPECT_EQ(ei.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(ops::eye(2, 2, 0, DType::boolean).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_TESSERA_ERROR(ops::eye(-2), "eye", "non-negative", "n=-2");
}

TEST(Creation, ShapeErrorsNameTheOp) {
  EXPECT_TESSERA_ERROR(ops::full({2, -1}, 0.0), "'full'", "negative", "[2, -1]");
  EXPECT_TESSERA_ERROR(ops::zeros({-3}), "'full'", "[-3]");
  EXPECT_TESSERA_ERROR(ops::ones({-1}, DType::i32), "'full'", "[-1]");
  EXPECT_TESSERA_ERROR(ir::make_node1("full", {}, ir::Attrs{{"shape", Shape{2}}, {"value", 1.0}}), "'full'",
                       "missing required attribute 'dtype'");
  EXPECT_TESSERA_ERROR(
      ir::make_node1("eye", {ops::zeros({1})},
                     ir::Attrs{{"n", int64_t{1}}, {"m", int64_t{1}}, {"k", int64_t{0}}, {"dtype", DType::f32}}),
      "'eye'", "f32[1]", "expected 0 inputs, got 1");
}

TEST(Creation, ScalarLike) {
  const Tensor f = ops::scalar_like(tensor_of({1}, DType::f16), 0.1);
  EXPECT_EQ(f.dtype(), DType::f16);
  expect_shape(f, {});
  expect_close(f, {0.0999755859375});
  const Tensor i = ops::scalar_like(tensor_of({1}, DType::i32), 3);
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(i.item(), 3.0);
  // A fraction with an integer tensor becomes f32, so that promotion keeps it.
  const Tensor frac = ops::scalar_like(tensor_of({1}, DType::i32), 2.5);
  EXPECT_EQ(frac.dtype(), DType::f32);
  EXPECT_EQ(frac.item(), 2.5);
  // With a bool tensor a number counts (bool + 1 is 2, as in NumPy and PyTorch): the scalar is i64.
  EXPECT_EQ(ops::scalar_like(tensor_of({1}, DType::boolean), 1.0).dtype(), DType::i64);
  EXPECT_EQ(ops::scalar_like(tensor_of({1}, DType::boolean), 2.0).dtype(), DType::i64);
  EXPECT_EQ(ops::scalar_like(tensor_of({1}, DType::boolean), 2.0).item(), 2.0);
  EXPECT_EQ(ops::scalar_like(tensor_of({1}, DType::boolean), 0.5).dtype(), DType::f32);
}
