// reshape, flatten, permute, transpose, broadcast_to, squeeze, unsqueeze (tessera/ops/shape.cpp):
// values, errors, gradients, and that the reference backend returns views rather than copies.
#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST(Reshape, KeepsRowMajorOrderAndInfersMinusOne) {
  Tensor x = iota_tensor({2, 3});
  Tensor y = ops::reshape(x, {3, -1});
  expect_shape(y, {3, 2});
  expect_close(y, {0, 1, 2, 3, 4, 5});
  expect_shape(ops::reshape(x, {-1}), {6});
  expect_shape(ops::reshape(x, {1, 6, 1}), {1, 6, 1});
  expect_shape(ops::reshape(ops::zeros({0, 4}), {-1, 2}), {0, 2});
}

TEST(Reshape, IsAViewOfContiguousInput) {
  Tensor x = iota_tensor({2, 3, 4});
  Tensor y = ops::reshape(x, {6, 4});
  EXPECT_TRUE(y.array().shares_storage_with(x.array()));
}

TEST(Reshape, OfTransposedInputCopiesInLogicalOrder) {
  Tensor x = iota_tensor({2, 3});
  Tensor y = ops::reshape(ops::transpose(x), {6});
  // x^T = [[0, 3], [1, 4], [2, 5]] read row by row.
  expect_close(y, {0, 3, 1, 4, 2, 5});
}

TEST(Reshape, Errors) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::reshape(x, {4, 2}), "reshape", "f32[2, 3]", "[4, 2]", "8 elements");
  EXPECT_TESSERA_ERROR(ops::reshape(x, {-1, -1}), "reshape", "f32[2, 3]", "more than one -1");
  EXPECT_TESSERA_ERROR(ops::reshape(x, {-1, 4}), "reshape", "f32[2, 3]", "cannot infer");
  EXPECT_TESSERA_ERROR(ops::reshape(x, {-2, -3}), "reshape", "f32[2, 3]", "negative dimension");
}

TEST(Reshape, HugeTargetShapesAreRefusedWithoutOverflow) {
  // The product of the known dimensions used to overflow (undefined behaviour) before any check.
  const int64_t big = int64_t{1} << 32;
  EXPECT_TESSERA_ERROR(ops::reshape(ops::zeros({2, 3}), {big, big, -1}), "reshape", "too large", "overflows 64 bits");
  // An empty input does not excuse strides that overflow.
  EXPECT_TESSERA_ERROR(ops::reshape(ops::zeros({0}), {0, int64_t{1} << 62, int64_t{1} << 62}), "reshape", "too large");
  expect_shape(ops::reshape(ops::zeros({0}), {0, big}), {0, big});
}

TEST(Reshape, Gradient) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::reshape(xs[0], {3, 1, 2, 2});
      },
      (std::vector<Array>{random_array({2, 6}, 1)}));
}

TEST(Flatten, MergesTheGivenRange) {
  Tensor x = iota_tensor({2, 3, 4, 5, 6});
  expect_shape(ops::flatten(x), {720});
  expect_shape(ops::flatten(x, 1, 3), {2, 60, 6});
  expect_shape(ops::flatten(x, -2), {2, 3, 4, 30});
  expect_shape(ops::flatten(ops::full({}, 7.0)), {1});
  expect_close(ops::flatten(iota_tensor({2, 2})), {0, 1, 2, 3});
  EXPECT_TESSERA_ERROR(ops::flatten(x, 3, 1), "flatten", "start axis 3 is after end axis 1");
  EXPECT_TESSERA_ERROR(ops::flatten(x, 0, 5), "flatten", "axis 5", "rank 5");
}

TEST(Permute, Rank5MovesEveryElement) {
  const Shape shape = {2, 3, 1, 4, 2};
  const std::vector<int64_t> axes = {3, 0, 4, 2, 1};
  Tensor x = iota_tensor(shape);
  Tensor y = ops::permute(x, axes);
  Shape out_shape;
  for (int64_t a : axes) out_shape.push_back(shape[static_cast<size_t>(a)]);
  expect_shape(y, out_shape);
  // out[i0, ..., i4] = x[j] with j[axes[k]] = i[k].
  std::vector<double> expected;
  for_each_index(out_shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> j(5);
    for (size_t k = 0; k < 5; ++k) j[static_cast<size_t>(axes[k])] = i[k];
    expected.push_back(static_cast<double>(flat_index(shape, j)));
  });
  expect_close(y, expected);
  EXPECT_TRUE(y.array().shares_storage_with(x.array()));
}

TEST(Permute, Errors) {
  Tensor x = ops::zeros({2, 3, 4});
  EXPECT_TESSERA_ERROR(ops::permute(x, {0, 1}), "permute", "f32[2, 3, 4]", "2 axes given for rank 3");
  EXPECT_TESSERA_ERROR(ops::permute(x, {0, 1, 1}), "permute", "f32[2, 3, 4]", "not a permutation");
  EXPECT_TESSERA_ERROR(ops::permute(x, {0, 1, 3}), "permute", "f32[2, 3, 4]", "not a permutation");
  EXPECT_TESSERA_ERROR(ops::permute(x, {0, -1, 1}), "permute", "not a permutation");
}

TEST(Permute, GradientRank5AndSecondOrder) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::permute(xs[0], {4, 2, 0, 3, 1});
      },
      (std::vector<Array>{random_array({2, 1, 3, 2, 2}, 2)}));
  // d/dx sum(permute(x)^3 * w) = 3 x^2 w (w permuted back): check the gradient is itself differentiable.
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        auto f = [](const std::vector<Tensor>& ys) {
          return ops::sum(ops::pow(ops::permute(ys[0], {1, 0}), 3.0) * ys[1]);
        };
        return grad(f, {0})({xs[0], xs[1]})[0];
      },
      (std::vector<Array>{random_array({2, 3}, 3), random_array({3, 2}, 4)}));
}

TEST(Transpose, SwapsLastTwoByDefaultAndIsAView) {
  Tensor x = iota_tensor({2, 3});
  Tensor y = ops::transpose(x);
  expect_shape(y, {3, 2});
  expect_close(y, {0, 3, 1, 4, 2, 5});
  EXPECT_TRUE(ops::transpose(x).array().shares_storage_with(x.array()));
  Tensor z = ops::transpose(iota_tensor({2, 3, 4}), 0, 2);
  expect_shape(z, {4, 3, 2});
  // z[k, j, i] = x[i, j, k] = 12 i + 4 j + k; check two elements.
  const std::vector<double> v = z.array().to_f64();
  EXPECT_EQ(v[static_cast<size_t>(flat_index({4, 3, 2}, {3, 1, 1}))], 12 + 4 + 3);
  EXPECT_EQ(v[static_cast<size_t>(flat_index({4, 3, 2}, {2, 2, 0}))], 8 + 2);
  EXPECT_TESSERA_ERROR(ops::transpose(ops::zeros({3})), "transpose", "axis -2", "rank 1");
}

TEST(Transpose, Gradient) {
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::transpose(xs[0], 1, 3); },
                         (std::vector<Array>{random_array({2, 3, 1, 4}, 5)}));
}

TEST(BroadcastTo, ValuesAndStrideZeroView) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  Tensor y = ops::broadcast_to(x, {2, 3});
  expect_close(y, {1, 2, 3, 1, 2, 3});
  EXPECT_TRUE(y.array().shares_storage_with(x.array()));
  EXPECT_EQ(y.array().strides()[0], 0);
  Tensor col = Tensor::from_vector<int32_t>({5, 7}, {2, 1});
  Tensor z = ops::broadcast_to(col, {2, 2, 3});
  EXPECT_EQ(z.dtype(), DType::i32);
  expect_close(z, {5, 5, 5, 7, 7, 7, 5, 5, 5, 7, 7, 7});
}

TEST(BroadcastTo, Errors) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::broadcast_to(x, {3, 3}), "broadcast_to", "f32[2, 3]", "cannot broadcast [2, 3] to [3, 3]");
  EXPECT_TESSERA_ERROR(ops::broadcast_to(x, {3}), "broadcast_to", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(ops::broadcast_to(ops::zeros({1}), {-1}), "broadcast_to", "f32[1]");
}

TEST(BroadcastTo, GradientSumsOverBroadcastAxes) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::broadcast_to(xs[0], {2, 4, 3, 1, 5});
      },
      (std::vector<Array>{random_array({4, 1, 1, 5}, 6)}));
  // A hand-computed gradient: d/dx sum(broadcast_to(x, [4, 3])) = 4 for each element.
  Tensor x = Tensor::from_vector<double>({1, 2, 3}, {3});
  auto g = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::broadcast_to(xs[0], {4, 3})); })({x});
  expect_close(g[0], {4, 4, 4});
}

TEST(Squeeze, DropsSizeOneAxes) {
  Tensor x = iota_tensor({1, 3, 1, 2});
  expect_shape(ops::squeeze(x), {3, 2});
  expect_shape(ops::squeeze(x, {0}), {3, 1, 2});
  expect_shape(ops::squeeze(x, {-2, 0}), {3, 2});
  expect_close(ops::squeeze(x), {0, 1, 2, 3, 4, 5});
  EXPECT_TRUE(ops::squeeze(x).array().shares_storage_with(x.array()));
  EXPECT_TESSERA_ERROR(ops::squeeze(x, {1}), "squeeze", "axis 1", "[1, 3, 1, 2]", "size 3", "expected 1");
  EXPECT_TESSERA_ERROR(ops::squeeze(x, {4}), "squeeze", "axis 4", "rank 4");
}

TEST(Unsqueeze, InsertsAxes) {
  Tensor x = iota_tensor({2, 3});
  expect_shape(ops::unsqueeze(x, 0), {1, 2, 3});
  expect_shape(ops::unsqueeze(x, 2), {2, 3, 1});
  expect_shape(ops::unsqueeze(x, -1), {2, 3, 1});
  expect_shape(ops::unsqueeze(x, -3), {1, 2, 3});
  expect_shape(ops::unsqueeze(ops::full({}, 1.0), 0), {1});
  EXPECT_TRUE(ops::unsqueeze(x, 1).array().shares_storage_with(x.array()));
  EXPECT_TESSERA_ERROR(ops::unsqueeze(x, 3), "unsqueeze", "axis 3", "rank 3");
  EXPECT_TESSERA_ERROR(ops::unsqueeze(x, -4), "unsqueeze", "axis -4");
}

TEST(SqueezeUnsqueeze, Gradient) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::unsqueeze(ops::squeeze(xs[0], {1}), 0) * 2.0; },
      (std::vector<Array>{random_array({3, 1, 2}, 7)}));
}

TEST(ShapeViews, HalfAndBoolDataPassThroughUnchanged) {
  Tensor h = Tensor::from_array(Array::from_vector<double>({0.5, -1.25, 2, 3}, {2, 2}).astype(DType::f16));
  Tensor t = ops::transpose(h);
  EXPECT_EQ(t.dtype(), DType::f16);
  expect_close(t, {0.5, 2, -1.25, 3});
  Tensor b = Tensor::from_vector<bool>({true, false, false, true, true, false}, {2, 3});
  Tensor r = ops::reshape(ops::permute(b, {1, 0}), {6});
  EXPECT_EQ(r.dtype(), DType::boolean);
  expect_close(r, {1, 1, 0, 1, 0, 0});
}
