// concat, stack, split, chunk.
#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST(Concat, ThreeInputsAlongLastAxis) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<float>({5, 6}, {2, 1});
  Tensor c = Tensor::from_vector<float>({7, 8, 9, 10, 11, 12}, {2, 3});
  Tensor y = ops::concat({a, b, c}, -1);
  expect_shape(y, {2, 6});
  expect_close(y, {1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12});
  Tensor z = ops::concat({a, ops::transpose(a)}, 0);  // a strided input
  expect_close(z, {1, 2, 3, 4, 1, 3, 2, 4});
}

TEST(Concat, SingleEmptyAndZeroSizedInputs) {
  Tensor a = Tensor::from_vector<int64_t>({1, 2, 3}, {3});
  expect_close(ops::concat({a}), {1, 2, 3});
  Tensor y = ops::concat({ops::zeros({0}, DType::i64), a, ops::zeros({0}, DType::i64)});
  expect_shape(y, {3});
  expect_close(y, {1, 2, 3});
  expect_shape(ops::concat({ops::zeros({2, 0}), ops::zeros({2, 0})}, 1), {2, 0});
}

TEST(Concat, PromotesDTypes) {
  Tensor i = Tensor::from_vector<int32_t>({1, 2}, {2});
  Tensor f = Tensor::from_vector<float>({0.5}, {1});
  Tensor y = ops::concat({i, f});
  EXPECT_EQ(y.dtype(), DType::f32);
  expect_close(y, {1, 2, 0.5});
  Tensor b = Tensor::from_vector<bool>({true, false}, {2});
  Tensor l = Tensor::from_vector<int64_t>({-7}, {1});
  Tensor z = ops::concat({b, l});
  EXPECT_EQ(z.dtype(), DType::i64);
  expect_close(z, {1, 0, -7});
  Tensor h = Tensor::from_array(Array::from_vector<double>({1.5}, {1}).astype(DType::f16));
  EXPECT_EQ(ops::concat({h, h}).dtype(), DType::f16);
}

TEST(Concat, Rank5) {
  const Shape sa = {2, 1, 2, 3, 2}, sb = {2, 1, 3, 3, 2};
  Tensor a = iota_tensor(sa);
  Tensor b = iota_tensor(sb, DType::f32) + 100.0;
  Tensor y = ops::concat({a, b}, 2);
  std::vector<double> expected;
  for_each_index({2, 1, 5, 3, 2}, [&](std::vector<int64_t> i) {
    if (i[2] < 2) {
      expected.push_back(static_cast<double>(flat_index(sa, i)));
    } else {
      i[2] -= 2;
      expected.push_back(100.0 + static_cast<double>(flat_index(sb, i)));
    }
  });
  expect_close(y, expected);
}

TEST(Concat, Errors) {
  Tensor a = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::concat({a, ops::zeros({3, 3})}, 1), "concat", "f32[2, 3]", "f32[3, 3]",
                       "input 1 has shape [3, 3]", "outside axis 1");
  EXPECT_TESSERA_ERROR(ops::concat({a, ops::zeros({2, 3, 1})}), "concat", "f32[2, 3, 1]", "input 1");
  EXPECT_TESSERA_ERROR(ops::concat({a, a}, 2), "concat", "axis 2", "rank 2");
  EXPECT_TESSERA_ERROR(ops::concat({ops::full({}, 1.0), ops::full({}, 2.0)}), "concat", "f32[]", "scalar");
  EXPECT_TESSERA_ERROR(ops::concat({}), "concat", "at least one");
}

TEST(Concat, GradientOfThreeInputs) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::concat({xs[0], xs[1], xs[2]}, 1);
      },
      (std::vector<Array>{random_array({2, 1, 3}, 1), random_array({2, 4, 3}, 2), random_array({2, 2, 3}, 3)}));
  // The same input twice gets both gradients; second order through the concatenation.
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        auto f = [](const std::vector<Tensor>& ys) {
          return ops::sum(ops::pow(ops::concat({ys[0], ys[0] * ys[1]}, 0), 3.0));
        };
        return grad(f)({xs[0], xs[1]})[0];
      },
      (std::vector<Array>{random_array({3}, 4), random_array({3}, 5)}));
}

TEST(Concat, GradientIsCastBackToEachInputDType) {
  Tensor a = Tensor::from_vector<float>({1, 2}, {2});
  Tensor b = Tensor::from_vector<double>({3}, {1});
  Tensor w = Tensor::from_vector<double>({10, 20, 30}, {3});
  auto g = grad([w](const std::vector<Tensor>& xs) { return ops::sum(ops::concat({xs[0], xs[1]}) * w); })({a, b});
  EXPECT_EQ(g[0].dtype(), DType::f32);
  EXPECT_EQ(g[1].dtype(), DType::f64);
  expect_close(g[0], {10, 20});
  expect_close(g[1], {30});
}

TEST(Stack, NewAxisAnywhere) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3}, {3});
  Tensor b = Tensor::from_vector<float>({4, 5, 6}, {3});
  expect_shape(ops::stack({a, b}), {2, 3});
  expect_close(ops::stack({a, b}), {1, 2, 3, 4, 5, 6});
  expect_shape(ops::stack({a, b}, 1), {3, 2});
  expect_close(ops::stack({a, b}, -1), {1, 4, 2, 5, 3, 6});
  expect_shape(ops::stack({ops::full({}, 1.0), ops::full({}, 2.0)}), {2});
}

TEST(Stack, ErrorsAndGradient) {
  EXPECT_TESSERA_ERROR(ops::stack({ops::zeros({3}), ops::zeros({2})}), "stack", "[2]", "[3]");
  EXPECT_TESSERA_ERROR(ops::stack({ops::zeros({3}), ops::zeros({3})}, 2), "stack", "axis 2");
  EXPECT_TESSERA_ERROR(ops::stack({}), "stack", "at least one");
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::stack({xs[0], xs[1], xs[0]}, 1);
      },
      (std::vector<Array>{random_array({2, 3}, 6), random_array({2, 3}, 7)}));
}

TEST(Split, PiecesAreViewsOfOneNode) {
  Tensor x = iota_tensor({2, 6});
  std::vector<Tensor> p = ops::split(x, {1, 3, 0, 2}, 1);
  ASSERT_EQ(p.size(), 4u);
  expect_shape(p[0], {2, 1});
  expect_shape(p[1], {2, 3});
  expect_shape(p[2], {2, 0});
  expect_shape(p[3], {2, 2});
  expect_close(p[0], {0, 6});
  expect_close(p[1], {1, 2, 3, 7, 8, 9});
  expect_close(p[3], {4, 5, 10, 11});
  for (const Tensor& t : p) {
    EXPECT_EQ(t.value().node(), p[0].value().node());
    if (t.numel() > 0) {
      EXPECT_TRUE(t.array().shares_storage_with(x.array()));
    }
  }
  EXPECT_EQ(p[3].value().index(), 3);
}

TEST(Split, Rank5AlongNegativeAxis) {
  const Shape shape = {1, 2, 1, 3, 5};
  std::vector<Tensor> p = ops::split(iota_tensor(shape), {2, 3}, -1);
  expect_close(p[1], expected_from({1, 2, 1, 3, 3}, shape, [](std::vector<int64_t> i) {
                 i[4] += 2;
                 return i;
               }));
}

TEST(Split, Errors) {
  Tensor x = ops::zeros({2, 6});
  EXPECT_TESSERA_ERROR(ops::split(x, {2, 3}, 1), "split", "f32[2, 6]", "add up to 5", "size 6");
  EXPECT_TESSERA_ERROR(ops::split(x, {7, -1}, 1), "split", "f32[2, 6]", "non-negative");
  EXPECT_TESSERA_ERROR(ops::split(x, {}, 1), "split", "at least one");
  EXPECT_TESSERA_ERROR(ops::split(x, {6}, 2), "split", "axis 2");
}

TEST(Split, PieceSizesThatOverflowAreRefused) {
  // Found by fuzz_ir_text: the running total of the piece sizes overflowed (undefined behaviour).
  const int64_t big = int64_t{1} << 62;
  EXPECT_TESSERA_ERROR(ops::split(ops::zeros({2, 6}), {big, big, big, big, 6}, 1), "split", "more than 64 bits");
}

TEST(Concat, SizesThatOverflowAreRefused) {
  // Types only (placeholders allocate nothing): the sum of the axis sizes overflowed.
  const std::string text =
      "graph @g(%0: f32[4611686018427387904] {name = \"a\"}, %1: f32[4611686018427387904] {name = \"b\"}) {\n"
      "  %2 = concat(%0, %1, %0) {axis = 0} : f32[1]\n  return %2\n}\n";
  EXPECT_TESSERA_ERROR(ir::parse_graph(text), "concat", "more than 64 bits");
}

TEST(Split, GradientWhenOnlySomePiecesAreUsed) {
  // Pieces 0 and 2 are used, piece 1 is not: its part of the gradient is zero.
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        std::vector<Tensor> p = ops::split(xs[0], {2, 1, 2}, 0);
        return p[0] * 3.0 + ops::square(p[2]);
      },
      (std::vector<Array>{random_array({5, 3}, 8)}));
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4}, {4});
  auto g = grad([](const std::vector<Tensor>& xs) {
    return ops::sum(ops::square(ops::split(xs[0], {1, 2, 1})[1]));
  })({x});
  expect_close(g[0], {0, 4, 6, 0});
}

TEST(Chunk, EqualPieces) {
  std::vector<Tensor> p = ops::chunk(iota_tensor({3, 4}), 2, 1);
  ASSERT_EQ(p.size(), 2u);
  expect_close(p[0], {0, 1, 4, 5, 8, 9});
  expect_close(p[1], {2, 3, 6, 7, 10, 11});
  EXPECT_EQ(ops::chunk(iota_tensor({6}), 3).size(), 3u);
  EXPECT_TESSERA_ERROR(ops::chunk(iota_tensor({3, 4}), 3, 1), "chunk", "[3, 4]", "3 equal pieces");
  EXPECT_TESSERA_ERROR(ops::chunk(iota_tensor({4}), 0), "chunk", "0 equal pieces");
  EXPECT_TESSERA_ERROR(ops::chunk(iota_tensor({4}), 2, 1), "chunk", "axis 1");
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        std::vector<Tensor> thirds = ops::chunk(xs[0], 3, -1);
        return thirds[2] * thirds[0];
      },
      (std::vector<Array>{random_array({2, 6}, 9)}));
}
