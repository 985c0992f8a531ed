// Shape, dtype and attribute errors of the reductions: each names the op, the input type and what
// was expected.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(ReduceErrors, FloatingOnlyReductionsRejectIntegers) {
  Tensor xi = ops::zeros({2, 3}, DType::i32);
  EXPECT_TESSERA_ERROR(ops::mean(xi), "mean", "i32[2, 3]", "floating");
  EXPECT_TESSERA_ERROR(ops::logsumexp(xi, {1}), "logsumexp", "i32[2, 3]", "floating");
  EXPECT_TESSERA_ERROR(ops::var(xi), "var", "i32[2, 3]", "floating");
  EXPECT_TESSERA_ERROR(ops::std(ops::zeros({4}, DType::boolean)), "std", "bool[4]", "floating");
  EXPECT_TESSERA_ERROR(ops::mean(ops::zeros({4}, DType::u8)), "mean", "u8[4]", "floating");
}

TEST(ReduceErrors, EmptyReductionsWithoutIdentity) {
  Tensor empty = ops::zeros({2, 0});
  EXPECT_TESSERA_ERROR(ops::max(empty, {1}), "max", "f32[2, 0]", "zero elements");
  EXPECT_TESSERA_ERROR(ops::min(empty), "min", "f32[2, 0]", "zero elements");
  EXPECT_TESSERA_ERROR(ops::max(ops::zeros({0}, DType::i32)), "max", "i32[0]", "zero elements");
  EXPECT_TESSERA_ERROR(ops::argmax(empty, 1), "argmax", "f32[2, 0]", "size 0");
  EXPECT_TESSERA_ERROR(ops::argmin(empty, -1), "argmin", "f32[2, 0]", "size 0");
  // sum and prod have identities.
  expect_close(ops::sum(empty, {1}), {0, 0});
  expect_close(ops::prod(empty, {1}), {1, 1});
}

TEST(ReduceErrors, AxisOutOfRange) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::max(x, {2}), "max", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::mean(x, {-3}), "mean", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::prod(x, {5}), "prod", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::logsumexp(x, {0, 7}), "logsumexp", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::argmax(x, 2), "argmax", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::argmin(x, -3), "argmin", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::cumsum(x, 2), "cumsum", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::var(x, {3}), "var", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::cumsum(Tensor::scalar(1.0), 0), "cumsum", "f32[]");
}

TEST(ReduceErrors, NegativeCorrection) {
  EXPECT_TESSERA_ERROR(ops::var(ops::zeros({3}), {}, -1), "var", "f32[3]", "correction");
}

TEST(ReduceErrors, ArgReductionsCarryNoGradient) {
  // The index output is integral: the gradient through it is simply absent (zero), not an error.
  Tensor x = Tensor::from_vector<double>({1, 3, 2}, {3});
  auto g = grad([](const std::vector<Tensor>& xs) {
    return ops::sum(xs[0]) + ops::sum(ops::cast(ops::argmax(xs[0], 0), DType::f64));
  })({x});
  expect_close(g[0], {1, 1, 1});
}
