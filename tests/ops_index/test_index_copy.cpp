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

TEST(IndexCopy, ConvertRoundsSrcToTheDtypeOfX) {
  // f32 rows into an f16 tensor: each value rounded to nearest even as astype rounds, on every backend
  // (the decomposition casts first).
  const Array x = random_array({4, 3}, 21, -1, 1, DType::f32).astype(DType::f16);
  const Array src = random_array({2, 3}, 22, -1, 1, DType::f32);
  const Tensor index = Tensor::from_vector<int64_t>({3, 0}, {2});
  const Tensor y = ops::index_copy_converted(Tensor(x), 0, index, Tensor(src));
  EXPECT_EQ(y.dtype(), DType::f16);
  const Tensor want = ops::index_copy(Tensor(x), 0, index, ops::cast(Tensor(src), DType::f16));
  const Array got = y.array().astype(DType::f32), expected = want.array().astype(DType::f32);
  EXPECT_EQ(got.to_vector<float>(), expected.to_vector<float>());
  const ir::OpDef& def = ir::OpRegistry::instance().get("index_copy");
  const std::vector<ir::Value> parts =
      def.decompose({Tensor(x), index, Tensor(src)}, ir::Attrs{{"axis", int64_t{0}}, {"convert", true}});
  EXPECT_EQ(Tensor(parts[0]).array().astype(DType::f32).to_vector<float>(), expected.to_vector<float>());
  // The same dtype is the plain op.
  EXPECT_FALSE(ops::index_copy_converted(Tensor(src), 0, index, Tensor(src)).value().node()->attrs().has("convert"));
}

TEST(IndexCopy, ConvertErrors) {
  const Tensor index = Tensor::from_vector<int64_t>({0}, {1});
  EXPECT_TESSERA_ERROR(ops::index_copy_converted(ops::zeros({3, 2}), 0, index, ops::zeros({1, 2}, DType::i32)),
                       "index_copy", "convert takes floating src and x", "i32 into f32");
  EXPECT_TESSERA_ERROR(ops::index_copy_converted(ops::zeros({3, 2}, DType::i64), 0, index, ops::zeros({1, 2})),
                       "index_copy", "convert takes floating", "f32 into i64");
}

TEST(IndexCopy, GradientThroughAConversion) {
  // f32 rows into an f64 tensor: exact, so finite differences in f64 x and a coarse step in f32 src
  // (the op is linear in src) check both cotangents; src's comes back as f32.
  const Array index = Array::from_vector<int64_t>({2, 0}, {2});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::index_copy_converted(xs[0], 0, xs[1], xs[2]) * xs[0]; },
      (std::vector<Array>{random_array({3, 2}, 23), index, random_array({2, 2}, 24, -1, 1, DType::f32)}),
      tessera::testing::GradCheckOptions{.eps = 0.125, .atol = 1e-5, .rtol = 1e-5});
}
