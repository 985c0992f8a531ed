// scatter_add and one_hot.
#include "ops_shape/helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST(ScatterAdd, AccumulatesRepeatedIndices) {
  Tensor x = ops::ones({2, 3});
  Tensor index = Tensor::from_vector<int64_t>({0, 0, 2, 1, 1, 1}, {2, 3});
  Tensor src = Tensor::from_vector<float>({10, 20, 30, 1, 2, 3}, {2, 3});
  // Row 0: columns 0 += 10 + 20, 2 += 30. Row 1: column 1 += 1 + 2 + 3.
  expect_close(ops::scatter_add(x, 1, index, src), {31, 1, 31, 1, 7, 1});
}

TEST(ScatterAdd, IndexSmallerThanSrcAndX) {
  Tensor x = ops::zeros({3, 2});
  Tensor index = Tensor::from_vector<int32_t>({2, 0}, {1, 2});
  Tensor src = Tensor::from_vector<float>({5, 6, 7, 8}, {2, 2});  // only src[0, :] is used
  expect_close(ops::scatter_add(x, 0, index, src), {0, 6, 0, 0, 5, 0});
  // Index narrower than x outside the axis: column 2 of x is untouched.
  Tensor y = ops::scatter_add(ops::zeros({2, 3}), 0, Tensor::from_vector<int64_t>({1, 1}, {1, 2}),
                              Tensor::from_vector<float>({4, 9}, {1, 2}));
  expect_close(y, {0, 0, 0, 4, 9, 0});
}

TEST(ScatterAdd, DTypesAndExactHalfAccumulation) {
  Tensor xi = Tensor::from_vector<int32_t>({1, 2}, {2});
  Tensor yi = ops::scatter_add(xi, 0, Tensor::from_vector<int64_t>({1, 1, 0}, {3}),
                               Tensor::from_vector<int32_t>({5, 6, 7}, {3}));
  EXPECT_EQ(yi.dtype(), DType::i32);
  expect_close(yi, {8, 13});
  // 3000 ones into one f16 element: accumulating in f16 would stall at 2048.
  const int64_t n = 3000;
  Tensor ones = ops::ones({n}, DType::f16);
  Tensor idx = Tensor::from_vector<int64_t>(std::vector<int64_t>(static_cast<size_t>(n), 0), {n});
  Tensor h = ops::scatter_add(ops::zeros({1}, DType::f16), 0, idx, ones);
  EXPECT_EQ(h.dtype(), DType::f16);
  expect_close(h, {3000});
}

TEST(ScatterAdd, Rank5) {
  const Shape xs = {2, 1, 3, 2, 2};
  const Shape is = {2, 1, 2, 2, 1};
  std::vector<int64_t> idx;
  std::vector<double> src;
  for (int64_t k = 0; k < shape_numel(is); ++k) {
    idx.push_back(k % 3);
    src.push_back(static_cast<double>(k + 1));
  }
  Tensor out =
      ops::scatter_add(ops::zeros(xs, DType::f64), 2, Tensor::from_vector(idx, is), Tensor::from_vector(src, is));
  std::vector<double> expected(static_cast<size_t>(shape_numel(xs)), 0.0);
  size_t k = 0;
  for_each_index(is, [&](std::vector<int64_t> i) {
    const double v = src[k];
    i[2] = idx[k++];
    expected[static_cast<size_t>(flat_index(xs, i))] += v;
  });
  expect_close(out, expected);
}

TEST(ScatterAdd, Errors) {
  Tensor x = ops::zeros({2, 3});
  Tensor i = Tensor::from_vector<int64_t>({0, 1}, {1, 2});
  EXPECT_TESSERA_ERROR(ops::scatter_add(x, 1, i, ops::zeros({1, 2}, DType::f64)), "scatter_add", "f32[2, 3]",
                       "f64[1, 2]", "src is f64 but x is f32");
  EXPECT_TESSERA_ERROR(ops::scatter_add(ops::zeros({2, 3}, DType::boolean), 1, i, ops::zeros({1, 2}, DType::boolean)),
                       "scatter_add", "bool[2, 3]", "numeric");
  EXPECT_TESSERA_ERROR(ops::scatter_add(x, 1, i, ops::zeros({1, 1})), "scatter_add", "dimension 1", "src's 1");
  EXPECT_TESSERA_ERROR(ops::scatter_add(x, 1, Tensor::from_vector<int64_t>({0, 0, 0}, {3, 1}), ops::zeros({3, 1})),
                       "scatter_add", "dimension 0", "x's 2");
  EXPECT_TESSERA_ERROR(ops::scatter_add(x, 1, ops::zeros({1, 2}), ops::zeros({1, 2})), "scatter_add", "i32 or i64");
  EXPECT_TESSERA_ERROR(ops::scatter_add(x, 1, Tensor::from_vector<int64_t>({0, 3}, {1, 2}), ops::ones({1, 2})).eval(),
                       "scatter_add", "index 3", "axis 1", "size 3");
  EXPECT_TESSERA_ERROR(ops::scatter_add(x, 0, Tensor::from_vector<int32_t>({0, -1}, {1, 2}), ops::ones({1, 2})).eval(),
                       "scatter_add", "index -1", "axis 0", "size 2", "negative");
}

TEST(ScatterAdd, Gradient) {
  const Array index = Array::from_vector<int64_t>({0, 0, 2, 1, 2, 2}, {2, 3});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::scatter_add(xs[0], 1, xs[1], xs[2]) * xs[0]; },
                         (std::vector<Array>{random_array({2, 4}, 1), index, random_array({2, 3}, 2)}));
  // Index smaller than src: the unused src elements get zero gradient.
  const Array small = Array::from_vector<int32_t>({2, 0}, {1, 2});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::scatter_add(xs[0], 0, xs[1], xs[2]); },
                         (std::vector<Array>{random_array({3, 2}, 3), small, random_array({2, 3}, 4)}));
}

TEST(ScatterAdd, GradientRank5AndSecondOrder) {
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < 8; ++k) idx.push_back((k * 3) % 2);
  const Array index = Array::from_vector<int64_t>(idx, {2, 1, 2, 1, 2});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::scatter_add(xs[0], 3, xs[1], xs[2]); },
      (std::vector<Array>{random_array({2, 1, 2, 2, 2}, 5), index, random_array({2, 1, 2, 1, 2}, 6)}));
  const Array index2 = Array::from_vector<int64_t>({1, 1, 0}, {3});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        auto f = [](const std::vector<Tensor>& ys) {
          return ops::sum(ops::pow(ops::scatter_add(ys[0], 0, ys[1], ys[2]), 3.0));
        };
        return grad(f, {0, 2})({xs[0], xs[1], xs[2]})[1];
      },
      (std::vector<Array>{random_array({2}, 7), index2, random_array({3}, 8)}));
}

TEST(OneHot, Values) {
  Tensor y = ops::one_hot(Tensor::from_vector<int64_t>({0, 2, 1, 2}, {2, 2}), 3);
  EXPECT_EQ(y.dtype(), DType::f32);
  expect_shape(y, {2, 2, 3});
  expect_close(y, {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1});
  Tensor i = ops::one_hot(Tensor::from_vector<int32_t>({3}, {1}), 4, DType::i32);
  EXPECT_EQ(i.dtype(), DType::i32);
  expect_close(i, {0, 0, 0, 1});
  Tensor b = ops::one_hot(Tensor::from_vector<int64_t>({1}, {}), 2, DType::boolean);
  expect_shape(b, {2});
  expect_close(b, {0, 1});
  Tensor strided = ops::one_hot(ops::flip(Tensor::from_vector<int64_t>({0, 1}, {2}), {0}), 2, DType::f64);
  expect_close(strided, {0, 1, 1, 0});
}

TEST(OneHot, Rank5) {
  const Shape shape = {2, 1, 2, 1, 3};
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < 12; ++k) idx.push_back((k * 5) % 4);
  Tensor y = ops::one_hot(Tensor::from_vector(idx, shape), 4);
  expect_shape(y, {2, 1, 2, 1, 3, 4});
  std::vector<double> expected;
  for (int64_t k : idx) {
    for (int64_t c = 0; c < 4; ++c) expected.push_back(c == k ? 1.0 : 0.0);
  }
  expect_close(y, expected);
}

TEST(OneHot, Errors) {
  EXPECT_TESSERA_ERROR(ops::one_hot(ops::zeros({2}), 3), "one_hot", "f32[2]", "i32 or i64");
  EXPECT_TESSERA_ERROR(ops::one_hot(Tensor::from_vector<int64_t>({0}, {1}), 0), "one_hot", "i64[1]",
                       "num_classes must be positive");
  EXPECT_TESSERA_ERROR(ops::one_hot(Tensor::from_vector<int64_t>({0, 3}, {2}), 3).eval(), "one_hot", "index 3",
                       "axis 1", "size 3");
  EXPECT_TESSERA_ERROR(ops::one_hot(Tensor::from_vector<int32_t>({-1}, {1}), 3).eval(), "one_hot", "index -1",
                       "negative");
}

TEST(OneHot, GradientPathThroughIndicesEndsQuietly) {
  // The indices come from x (through a cast), so a gradient reaches one_hot; it must stop there.
  Tensor x = Tensor::from_vector<double>({0.2, 1.7, 2.1}, {3});
  auto g = grad([](const std::vector<Tensor>& xs) {
    const Tensor w = Tensor::from_vector<double>({1, 2, 3}, {3});
    return ops::sum(ops::one_hot(ops::cast(xs[0], DType::i64), 3, DType::f64) * w) + ops::sum(xs[0] * xs[0]);
  })({x});
  expect_close(g[0], {0.4, 3.4, 4.2});
}
