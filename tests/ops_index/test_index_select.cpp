// index_select.
#include "ops_shape/helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST(IndexSelect, PicksWholeSlices) {
  Tensor x = iota_tensor({3, 2});  // [[0, 1], [2, 3], [4, 5]]
  Tensor rows = ops::index_select(x, 0, Tensor::from_vector<int64_t>({2, 0, 2}, {3}));
  expect_shape(rows, {3, 2});
  expect_close(rows, {4, 5, 0, 1, 4, 5});
  Tensor cols = ops::index_select(x, -1, Tensor::from_vector<int32_t>({1, 1, 0, 1}, {4}));
  expect_shape(cols, {3, 4});
  expect_close(cols, {1, 1, 0, 1, 3, 3, 2, 3, 5, 5, 4, 5});
  expect_shape(ops::index_select(x, 0, Tensor::from_vector<int64_t>({}, {0})), {0, 2});
}

TEST(IndexSelect, StridedInputsAndDTypes) {
  // A reversed index view and a transposed x.
  Tensor index = ops::flip(Tensor::from_vector<int64_t>({0, 1, 1}, {3}), {0});  // [1, 1, 0]
  Tensor x = ops::transpose(iota_tensor({2, 3}, DType::i32));                   // [[0, 3], [1, 4], [2, 5]]
  Tensor y = ops::index_select(x, 0, index);
  EXPECT_EQ(y.dtype(), DType::i32);
  expect_close(y, {1, 4, 1, 4, 0, 3});
  Tensor b =
      ops::index_select(Tensor::from_vector<bool>({false, true}, {2}), 0, Tensor::from_vector<int64_t>({1, 0, 1}, {3}));
  expect_close(b, {1, 0, 1});
}

TEST(IndexSelect, Rank5) {
  const Shape shape = {2, 1, 3, 4, 2};
  const std::vector<int64_t> idx = {3, 0, 0, 2, 1};
  Tensor y = ops::index_select(iota_tensor(shape), 3, Tensor::from_vector(idx, {5}));
  expect_close(y, expected_from({2, 1, 3, 5, 2}, shape, [&](std::vector<int64_t> i) {
                 i[3] = idx[static_cast<size_t>(i[3])];
                 return i;
               }));
}

TEST(IndexSelect, Errors) {
  Tensor x = ops::zeros({3, 2});
  EXPECT_TESSERA_ERROR(ops::index_select(x, 0, Tensor::from_vector<int64_t>({0, 1}, {1, 2})), "index_select",
                       "f32[3, 2]", "i64[1, 2]", "1-D");
  EXPECT_TESSERA_ERROR(ops::index_select(x, 0, Tensor::from_vector<uint8_t>({0}, {1})), "index_select", "u8[1]",
                       "i32 or i64");
  EXPECT_TESSERA_ERROR(ops::index_select(x, 2, Tensor::from_vector<int64_t>({0}, {1})), "index_select", "axis 2");
  EXPECT_TESSERA_ERROR(ops::index_select(x, 0, Tensor::from_vector<int64_t>({0, 3}, {2})).eval(), "index_select",
                       "index 3", "axis 0", "size 3");
  EXPECT_TESSERA_ERROR(ops::index_select(x, 1, Tensor::from_vector<int32_t>({-2}, {1})).eval(), "index_select",
                       "index -2", "axis 1", "size 2", "negative");
}

TEST(IndexSelect, Gradient) {
  const Array index = Array::from_vector<int64_t>({2, 0, 2, 2}, {4});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::index_select(xs[0], 1, xs[1]); },
                         (std::vector<Array>{random_array({2, 3, 2}, 1), index}));
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
  auto g = grad([](const std::vector<Tensor>& xs) {
    return ops::sum(ops::index_select(xs[0], 0, Tensor::from_vector<int64_t>({1, 1, 1}, {3})));
  })({x});
  expect_close(g[0], {0, 0, 3, 3});
}

TEST(IndexSelect, GradientRank5AndSecondOrder) {
  const Array index = Array::from_vector<int32_t>({1, 0, 1}, {3});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::index_select(xs[0], -2, xs[1]); },
                         (std::vector<Array>{random_array({2, 1, 2, 2, 3}, 2), index}));
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        auto f = [](const std::vector<Tensor>& ys) {
          return ops::sum(ops::pow(ops::index_select(ys[0], 0, ys[1]), 3.0));
        };
        return grad(f, {0})({xs[0], xs[1]})[0];
      },
      (std::vector<Array>{random_array({3, 2}, 3), Array::from_vector<int64_t>({0, 2, 0}, {3})}));
}
