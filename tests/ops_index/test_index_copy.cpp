// index_copy: whole slices written over x (the KV cache's row writes).
#include "ops_shape/helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST(IndexCopy, ReplacesRowsAlongEachAxis) {
  Tensor x = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2});
  Tensor rows = ops::index_copy(x, 0, Tensor::from_vector<int64_t>({3, 1}, {2}),
                                Tensor::from_vector<float>({10, 11, 12, 13}, {2, 2}));
  expect_close(rows, {0, 1, 12, 13, 4, 5, 10, 11});
  Tensor cols = ops::index_copy(x, -1, Tensor::from_vector<int32_t>({1}, {1}),
                                Tensor::from_vector<float>({9, 9, 9, 9}, {4, 1}));
  expect_close(cols, {0, 9, 2, 9, 4, 9, 6, 9});
  // An empty index copies x.
  expect_close(ops::index_copy(x, 0, Tensor::from_vector<int64_t>({}, {0}), ops::zeros({0, 2})),
               {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST(IndexCopy, AnyDTypeAndRank4) {
  Tensor b = ops::index_copy(Tensor::from_vector<bool>({false, false, false}, {3}), 0,
                             Tensor::from_vector<int64_t>({2}, {1}), Tensor::from_vector<bool>({true}, {1}));
  EXPECT_EQ(b.dtype(), DType::boolean);
  expect_close(b, {0, 0, 1});
  Tensor i = ops::index_copy(Tensor::from_vector<int32_t>({1, 2, 3}, {3}), 0, Tensor::from_vector<int64_t>({0}, {1}),
                             Tensor::from_vector<int32_t>({7}, {1}));
  expect_close(i, {7, 2, 3});
  const Shape xs{2, 3, 2, 2};
  std::vector<double> x(24), src(16);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<double>(k);
  for (size_t k = 0; k < src.size(); ++k) src[k] = 100.0 + static_cast<double>(k);
  Tensor y = ops::index_copy(Tensor::from_vector(x, xs), 1, Tensor::from_vector<int64_t>({2, 0}, {2}),
                             Tensor::from_vector(src, {2, 2, 2, 2}));
  std::vector<double> expected = x;
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t j = 0; j < 2; ++j) {
      const int64_t row = j == 0 ? 2 : 0;
      for (int64_t c = 0; c < 4; ++c) expected[static_cast<size_t>((a * 3 + row) * 4 + c)] = src[static_cast<size_t>((a * 2 + j) * 4 + c)];
    }
  }
  expect_close(y, expected);
}

TEST(IndexCopy, ShapeAndIndexErrors) {
  const Tensor x = ops::zeros({3, 2});
  EXPECT_TESSERA_ERROR(ops::index_copy(x, 0, Tensor::from_vector<int64_t>({0}, {1}), ops::zeros({1, 3})),
                       "index_copy", "i.e. [1, 2]", "got [1, 3]");
  EXPECT_TESSERA_ERROR(ops::index_copy(x, 0, ops::zeros({1}), ops::zeros({1, 2})), "index_copy", "i32 or i64");
  EXPECT_TESSERA_ERROR(ops::index_copy(x, 0, Tensor::from_vector<int64_t>({0}, {1, 1}), ops::zeros({1, 2})),
                       "index_copy", "1-D");
  EXPECT_TESSERA_ERROR(ops::index_copy(x, 2, Tensor::from_vector<int64_t>({0}, {1}), ops::zeros({1, 2})),
                       "index_copy", "axis 2");
  EXPECT_TESSERA_ERROR(ops::index_copy(x, 0, Tensor::from_vector<int64_t>({0}, {1}), ops::zeros({1, 2}, DType::f64)),
                       "index_copy", "src is f64");
  EXPECT_TESSERA_ERROR(ops::index_copy(x, 0, Tensor::from_vector<int64_t>({3}, {1}), ops::zeros({1, 2})).eval(),
                       "index_copy", "index 3", "size 3");
  EXPECT_TESSERA_ERROR(ops::index_copy(x, 0, Tensor::from_vector<int64_t>({1, 1}, {2}), ops::zeros({2, 2})).eval(),
                       "index_copy", "index 1 appears twice");
}

TEST(IndexCopy, Gradient) {
  const Array index = Array::from_vector<int64_t>({2, 0}, {2});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::index_copy(xs[0], 0, xs[1], xs[2]) * xs[0]; },
                         (std::vector<Array>{random_array({3, 2}, 11), index, random_array({2, 2}, 12)}));
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::index_copy(xs[0], 1, xs[1], xs[2]); },
                         (std::vector<Array>{random_array({2, 3, 2}, 13), Array::from_vector<int32_t>({1}, {1}),
                                             random_array({2, 1, 2}, 14)}));
}
