// Result dtypes of the elementwise ops for mixed operands, NumPy broadcasting up to rank 5 and with
// scalars, and the shape errors (which must name the op and both operand types).
#include "elementwise_test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Promotion, ArithmeticFollowsPromoteTypes) {
  for (DType a : kAllDTypes) {
    for (DType b : kAllDTypes) {
      const Tensor x = ops::ones({2}, a), y = ops::ones({2}, b);
      const DType p = promote_types(a, b);
      const std::string pair = std::string(dtype_name(a)) + " with " + dtype_name(b);
      EXPECT_EQ(ops::add(x, y).dtype(), p) << pair;
      EXPECT_EQ(ops::mul(x, y).dtype(), p) << pair;
      EXPECT_EQ(ops::maximum(x, y).dtype(), p) << pair;
      // Division and pow are floating: integer (and bool) pairs compute in f32.
      const DType fp = is_floating(p) ? p : DType::f32;
      EXPECT_EQ(ops::div(x, y).dtype(), fp) << pair;
      EXPECT_EQ(ops::pow(x, y).dtype(), fp) << pair;
      // Comparisons and logic are always bool.
      EXPECT_EQ(ops::lt(x, y).dtype(), DType::boolean) << pair;
      EXPECT_EQ(ops::eq(x, y).dtype(), DType::boolean) << pair;
      EXPECT_EQ(ops::logical_or(x, y).dtype(), DType::boolean) << pair;
      EXPECT_EQ(ops::where(ops::ones({2}, DType::boolean), x, y).dtype(), p) << pair;
      // Values survive the promotion: 1 + 1 = 2 in every result type except bool (logical or).
      const double two = p == DType::boolean ? 1.0 : 2.0;
      EXPECT_EQ(ops::add(x, y).to_vector<double>(), (std::vector<double>{two, two})) << pair;
    }
  }
}

TEST(Promotion, DocumentedExamples) {
  // i32 with f16 gives f16 (and 2049 rounds to 2048 there).
  const Tensor s = ops::add(tensor_of({2049}, DType::i32), tensor_of({0}, DType::f16));
  EXPECT_EQ(s.dtype(), DType::f16);
  expect_close(s, {2048});
  // u8 with i8 gives i32: no wrap-around for 200 + (-100) or 200 - (-100).
  const Tensor u = tensor_of({200}, DType::u8), i = tensor_of({-100}, DType::i8);
  EXPECT_EQ(ops::add(u, i).dtype(), DType::i32);
  EXPECT_EQ(ops::add(u, i).to_vector<int64_t>()[0], 100);
  EXPECT_EQ(ops::sub(u, i).to_vector<int64_t>()[0], 300);
  // Integer division gives f32; f16 with bf16 gives f32.
  const Tensor q = ops::div(tensor_of({1}, DType::i64), tensor_of({4}, DType::i64));
  EXPECT_EQ(q.dtype(), DType::f32);
  expect_close(q, {0.25});
  EXPECT_EQ(ops::mul(tensor_of({1}, DType::f16), tensor_of({1}, DType::bf16)).dtype(), DType::f32);
  // A float operand keeps its width against any integer: i64 with f32 is f32.
  EXPECT_EQ(ops::add(tensor_of({1}, DType::i64), tensor_of({1}, DType::f32)).dtype(), DType::f32);
  EXPECT_EQ(ops::sub(tensor_of({1}, DType::boolean), tensor_of({1}, DType::u8)).dtype(), DType::u8);
}

TEST(Broadcast, RankFiveAgainstExplicitIndexing) {
  // a: [2, 1, 3, 1, 2], b: [4, 1, 5, 1] -> [2, 4, 3, 5, 2].
  const Array av = random_array({2, 1, 3, 1, 2}, 5), bv = random_array({4, 1, 5, 1}, 6);
  const Tensor a = Tensor::from_array(av), b = Tensor::from_array(bv);
  const Tensor y = ops::sub(a, b);
  expect_shape(y, {2, 4, 3, 5, 2});
  const auto A = av.to_f64(), B = bv.to_f64(), Y = y.to_vector<double>();
  size_t n = 0;
  for (size_t i0 = 0; i0 < 2; ++i0)
    for (size_t i1 = 0; i1 < 4; ++i1)
      for (size_t i2 = 0; i2 < 3; ++i2)
        for (size_t i3 = 0; i3 < 5; ++i3)
          for (size_t i4 = 0; i4 < 2; ++i4) {
            const double want = A[(i0 * 3 + i2) * 2 + i4] - B[i1 * 5 + i3];
            ASSERT_EQ(Y[n++], want) << i0 << i1 << i2 << i3 << i4;
          }
  // Broadcasting is symmetric in shape (the reverse operand order gives the same shape).
  expect_shape(ops::sub(b, a), {2, 4, 3, 5, 2});
}

TEST(Broadcast, ScalarsEmptyAndStridedOperands) {
  const Tensor m = tensor_of({1, 2, 3, 4, 5, 6}, DType::f64, {2, 3});
  expect_close(ops::mul(m, Tensor::scalar(2.0, DType::f64)), {2, 4, 6, 8, 10, 12});
  expect_close(ops::sub(Tensor::scalar(10.0, DType::f64), m), {9, 8, 7, 6, 5, 4});
  const Tensor s = ops::add(Tensor::scalar(1.0), Tensor::scalar(2.0));
  expect_shape(s, {});
  EXPECT_EQ(s.item(), 3.0);
  expect_close(ops::add(m, tensor_of({10, 20, 30})), {11, 22, 33, 14, 25, 36});
  expect_close(ops::add(m, tensor_of({10, 20}, DType::f64, {2, 1})), {11, 12, 13, 24, 25, 26});
  expect_shape(ops::add(ops::zeros({0, 3}), ops::zeros({1, 3})), {0, 3});
  expect_shape(ops::add(ops::zeros({2, 1, 0}), ops::zeros({3, 1})), {2, 3, 0});
  // A transposed operand and a reversed operand.
  expect_close(ops::add(ops::transpose(m, 0, 1), tensor_of({0, 100}, DType::f64, {1, 2})), {1, 104, 2, 105, 3, 106});
  expect_close(ops::mul(ops::slice(tensor_of({1, 2, 3}), 0, 2, -4, -1), tensor_of({1, 10, 100})), {3, 20, 100});
  // Comparisons, where and clamp broadcast the same way.
  EXPECT_EQ(ops::gt(m, tensor_of({2}, DType::f64, {1, 1})).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 1, 1, 1, 1}));
  expect_shape(ops::where(ops::ones({2, 1, 1}, DType::boolean), ops::zeros({3, 1}), ops::zeros({4})), {2, 3, 4});
}

TEST(Broadcast, ShapeErrorsNameTheOpAndBothTypes) {
  const Tensor a = ops::zeros({2, 3}), b = ops::zeros({4}, DType::f16);
  const std::vector<std::pair<std::string, std::function<Tensor()>>> cases{
      {"add", [&] { return ops::add(a, b); }},
      {"sub", [&] { return ops::sub(a, b); }},
      {"mul", [&] { return ops::mul(a, b); }},
      {"div", [&] { return ops::div(a, b); }},
      {"pow", [&] { return ops::pow(a, b); }},
      {"maximum", [&] { return ops::maximum(a, b); }},
      {"minimum", [&] { return ops::minimum(a, b); }},
      {"eq", [&] { return ops::eq(a, b); }},
      {"ne", [&] { return ops::ne(a, b); }},
      {"lt", [&] { return ops::lt(a, b); }},
      {"le", [&] { return ops::le(a, b); }},
      {"gt", [&] { return ops::gt(a, b); }},
      {"ge", [&] { return ops::ge(a, b); }},
      {"logical_and", [&] { return ops::logical_and(a, b); }},
      {"logical_or", [&] { return ops::logical_or(a, b); }},
  };
  for (const auto& [name, make] : cases) {
    EXPECT_TESSERA_ERROR(make(), "'" + name + "'", "f32[2, 3]", "f16[4]", "[2, 3] and [4]", "broadcast");
  }
  EXPECT_TESSERA_ERROR(ops::add(ops::zeros({2, 5, 7}), ops::zeros({3, 1, 7})), "'add'", "f32[2, 5, 7]", "f32[3, 1, 7]");
  EXPECT_TESSERA_ERROR(ops::mul(ops::zeros({0}), ops::zeros({2})), "'mul'", "f32[0]", "f32[2]");
  EXPECT_TESSERA_ERROR(ops::where(ops::ones({3}, DType::boolean), ops::zeros({2}), ops::zeros({1})), "'where'",
                       "bool[3]", "f32[2]", "f32[1]", "broadcast");
  EXPECT_TESSERA_ERROR(ops::where(ops::ones({2}), ops::zeros({2}), ops::zeros({2})), "'where'", "f32[2]", "bool");
  EXPECT_TESSERA_ERROR(ops::where(ops::ones({2}, DType::i32), ops::zeros({2}), ops::zeros({2})), "'where'", "i32[2]",
                       "condition");
  EXPECT_TESSERA_ERROR(ops::clamp(ops::zeros({2}), 3.0, 1.0), "'clamp'", "f32[2]", "min 3", "max 1");
  EXPECT_TESSERA_ERROR(ops::clamp(ops::zeros({2}, DType::boolean), 0.0, 1.0), "'clamp'", "bool[2]", "numeric");
  EXPECT_TESSERA_ERROR(ir::make_node1("add", {ops::zeros({2})}), "'add'", "expected 2 inputs, got 1");
}
