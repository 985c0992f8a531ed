// repeat (tiling), tril, triu.
#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST(Repeat, TilesWholeCopies) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor y = ops::repeat(x, {2, 3});
  expect_shape(y, {4, 6});
  expect_close(y, {1, 2, 1, 2, 1, 2,  //
                   3, 4, 3, 4, 3, 4,  //
                   1, 2, 1, 2, 1, 2,  //
                   3, 4, 3, 4, 3, 4});
  Tensor z = ops::repeat(Tensor::from_vector<int32_t>({5, 6}, {2}), {2, 1, 2});  // gains leading axes
  EXPECT_EQ(z.dtype(), DType::i32);
  expect_shape(z, {2, 1, 4});
  expect_close(z, {5, 6, 5, 6, 5, 6, 5, 6});
  expect_shape(ops::repeat(x, {0, 2}), {0, 4});
  expect_close(ops::repeat(x, {1, 1}), {1, 2, 3, 4});
  expect_close(ops::repeat(ops::full({}, 7.0), {3}), {7, 7, 7});
}

TEST(Repeat, Rank5) {
  const Shape shape = {2, 1, 3, 1, 2};
  const std::vector<int64_t> reps = {1, 3, 2, 2, 1};
  Shape out;
  for (size_t d = 0; d < 5; ++d) out.push_back(shape[d] * reps[d]);
  expect_close(ops::repeat(iota_tensor(shape), reps), expected_from(out, shape, [&](std::vector<int64_t> i) {
                 for (size_t d = 0; d < 5; ++d) i[d] %= shape[d];
                 return i;
               }));
}

TEST(Repeat, ErrorsAndGradient) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::repeat(x, {2}), "repeat", "f32[2, 3]", "at least one per axis");
  EXPECT_TESSERA_ERROR(ops::repeat(x, {2, -1}), "repeat", "f32[2, 3]", "non-negative");
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::repeat(xs[0], {2, 1, 3});
      },
      (std::vector<Array>{random_array({2, 2}, 1)}));
  Tensor v = Tensor::from_vector<double>({1, 2}, {2});
  auto g = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::repeat(xs[0], {3, 2})); })({v});
  expect_close(g[0], {6, 6});
}

TEST(Triangle, TrilAndTriuOfARectangle) {
  Tensor x = iota_tensor({3, 4}) + 1.0;  // 1..12
  expect_close(ops::tril(x), {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  expect_close(ops::tril(x, 1), {1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12});
  expect_close(ops::tril(x, -1), {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  expect_close(ops::tril(x, -5), std::vector<double>(12, 0.0));
  expect_close(ops::triu(x), {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  expect_close(ops::triu(x, 2), {0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0});
  expect_close(ops::triu(x, -1), {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12});
}

TEST(Triangle, BatchedRank5AndDTypes) {
  const Shape shape = {2, 1, 2, 3, 3};
  std::vector<double> expected;
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    expected.push_back(i[4] - i[3] >= 1 ? static_cast<double>(flat_index(shape, i)) : 0.0);
  });
  expect_close(ops::triu(iota_tensor(shape), 1), expected);
  Tensor b = ops::tril(Tensor::from_vector<bool>({true, true, true, true}, {2, 2}));
  EXPECT_EQ(b.dtype(), DType::boolean);
  expect_close(b, {1, 0, 1, 1});
  Tensor i = ops::triu(Tensor::from_vector<int64_t>({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(i.dtype(), DType::i64);
  expect_close(i, {1, 2, 0, 4});
}

TEST(Triangle, ErrorsAndGradient) {
  EXPECT_TESSERA_ERROR(ops::tril(ops::zeros({3})), "tril", "f32[3]", "rank >= 2");
  EXPECT_TESSERA_ERROR(ops::triu(ops::full({}, 1.0)), "triu", "f32[]", "rank >= 2");
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::tril(xs[0], -1) + ops::triu(xs[0], 2); },
                         (std::vector<Array>{random_array({2, 4, 3}, 2)}));
}
