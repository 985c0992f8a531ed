// gather / take_along_axis.
#include <limits>

#include "ops_shape/helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {
Tensor idx64(const std::vector<int64_t>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape);
}
Tensor idx32(const std::vector<int32_t>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape);
}
}  // namespace

TEST(Gather, TorchExamples) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  // out[i][j] = x[i][index[i][j]]
  expect_close(ops::gather(x, 1, idx64({0, 0, 1, 0}, {2, 2})), {1, 1, 4, 3});
  // out[i][j] = x[index[i][j]][j]
  expect_close(ops::gather(x, 0, idx32({1, 0, 0, 0}, {2, 2})), {3, 2, 1, 2});
  expect_close(ops::take_along_axis(x, idx64({1, 1, 0, 1}, {2, 2}), -1), {2, 2, 3, 4});
}

TEST(Gather, IndexShapeDiffersFromX) {
  Tensor x = iota_tensor({3, 4});
  // Smaller than x outside the axis: rows 0..1 only.
  Tensor a = ops::gather(x, 1, idx64({3, 0, 2, 2}, {2, 2}));
  expect_shape(a, {2, 2});
  expect_close(a, {3, 0, 6, 6});
  // Longer than x along the axis.
  Tensor b = ops::gather(x, 1, idx64({0, 1, 2, 3, 3, 2, 1, 0, 0, 0}, {1, 10}));
  expect_close(b, {0, 1, 2, 3, 3, 2, 1, 0, 0, 0});
  expect_shape(ops::gather(x, 0, idx64({}, {0, 4})), {0, 4});
}

TEST(Gather, StridedInputsAndDTypes) {
  Tensor x = ops::transpose(iota_tensor({3, 2}));  // [[0, 2, 4], [1, 3, 5]]
  Tensor index = ops::broadcast_to(idx64({2, 0}, {1, 2}), {2, 2});
  expect_close(ops::gather(x, 1, index), {4, 0, 5, 1});
  Tensor b = ops::gather(Tensor::from_vector<bool>({true, false}, {2}), 0, idx32({1, 1, 0}, {3}));
  EXPECT_EQ(b.dtype(), DType::boolean);
  expect_close(b, {0, 0, 1});
  Tensor h = Tensor::from_array(Array::from_vector<double>({0.5, -2}, {2}).astype(DType::f16));
  Tensor hg = ops::gather(h, 0, idx64({1, 0}, {2}));
  EXPECT_EQ(hg.dtype(), DType::f16);
  expect_close(hg, {-2, 0.5});
  Tensor i = ops::gather(Tensor::from_vector<int64_t>({10, 20, 30}, {3}), 0, idx32({2}, {1}));
  EXPECT_EQ(i.dtype(), DType::i64);
  expect_close(i, {30});
}

TEST(Gather, Rank5) {
  const Shape shape = {2, 3, 1, 4, 2};
  const Shape ishape = {2, 2, 1, 5, 1};
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < shape_numel(ishape); ++k) idx.push_back((k * 7 + 3) % 4);
  Tensor out = ops::gather(iota_tensor(shape), 3, idx64(idx, ishape));
  std::vector<double> expected;
  size_t k = 0;
  for_each_index(ishape, [&](std::vector<int64_t> i) {
    i[3] = idx[k++];
    expected.push_back(static_cast<double>(flat_index(shape, i)));
  });
  expect_close(out, expected);
}

TEST(Gather, ShapeErrors) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::gather(x, 1, ops::zeros({2, 2})), "gather", "f32[2, 3]", "f32[2, 2]", "i32 or i64");
  EXPECT_TESSERA_ERROR(ops::gather(x, 1, idx64({0}, {1})), "gather", "f32[2, 3]", "i64[1]", "rank 1", "rank of x (2)");
  EXPECT_TESSERA_ERROR(ops::gather(x, 1, idx64({0, 0, 0}, {3, 1})), "gather", "i64[3, 1]", "dimension 0", "size 3",
                       "x's 2");
  EXPECT_TESSERA_ERROR(ops::gather(x, 2, idx64({0}, {1, 1})), "gather", "axis 2", "rank 2");
  EXPECT_TESSERA_ERROR(ops::gather(ops::full({}, 1.0), 0, idx64({0}, {})), "gather", "f32[]", "scalar");
}

TEST(Gather, OutOfRangeIndicesThrowAtEvaluation) {
  Tensor x = ops::zeros({2, 3});
  Tensor bad = ops::gather(x, 1, idx64({0, 3}, {1, 2}));  // builds fine: values are not known yet
  EXPECT_TESSERA_ERROR(bad.eval(), "gather", "f32[2, 3]", "i64[1, 2]", "index 3", "axis 1", "size 3");
  EXPECT_TESSERA_ERROR(ops::gather(x, 0, idx32({-1}, {1, 1})).eval(), "gather", "index -1", "axis 0", "size 2",
                       "negative indices are not supported");
  EXPECT_TESSERA_ERROR(ops::gather(x, 0, idx64({std::numeric_limits<int64_t>::max()}, {1, 1})).eval(), "gather",
                       "index 9223372036854775807");
}

TEST(Gather, Gradient) {
  // Repeated indices: their gradients add up.
  const Array index = Array::from_vector<int64_t>({0, 2, 2, 1, 1, 1, 0, 0}, {2, 4});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::gather(xs[0], 1, xs[1]); },
                         (std::vector<Array>{random_array({3, 3}, 1), index}));
  Tensor x = Tensor::from_vector<double>({1, 2, 3}, {3});
  auto g = grad([](const std::vector<Tensor>& xs) {
    return ops::sum(ops::gather(xs[0], 0, Tensor::from_vector<int32_t>({2, 2, 0, 2}, {4})));
  })({x});
  expect_close(g[0], {1, 0, 3});
}

// One index per line (a loss picking its target class): the gradient is formed elementwise (g where
// the position equals the index), never through scatter_add, and matches finite differences.
TEST(Gather, GradientOfOnePickPerLineIsElementwise) {
  const Array index = Array::from_vector<int64_t>({2, 0, 3, 3, 1, 0}, {2, 1, 3});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::gather(xs[0], 1, xs[1]); },
                         (std::vector<Array>{random_array({2, 4, 3}, 4), index}));
  const Array rows = Array::from_vector<int32_t>({4, 0, 2}, {3, 1});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::exp(ops::gather(xs[0], -1, xs[1])); },
                         (std::vector<Array>{random_array({3, 5}, 5), rows}));
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::gather(xs[0], 1, xs[1]) * 3.0); }, {0})(
            in);
      },
      {{DType::f32, {3, 5}}, {DType::i32, {3, 1}}});
  for (const ir::NodePtr& n : g.nodes()) EXPECT_NE(n->op_name(), "scatter_add");
  const std::vector<Array> got = backends::reference_backend().compile(g)->run(
      {Array::from_vector<float>(std::vector<float>(15, 1.0f), {3, 5}), rows.astype(DType::i32)});
  expect_close(Tensor::from_array(got[0]), {0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 3, 0, 0});
}

TEST(Gather, GradientRank5AndSecondOrder) {
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < 12; ++k) idx.push_back((k * 5) % 3);
  const Array index = Array::from_vector<int64_t>(idx, {1, 2, 3, 2, 1});
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::gather(xs[0], 2, xs[1]); },
                         (std::vector<Array>{random_array({2, 2, 3, 2, 2}, 2), index}));
  const Array index2 = Array::from_vector<int64_t>({1, 1, 0, 2, 0, 0}, {2, 3});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        auto f = [](const std::vector<Tensor>& ys) { return ops::sum(ops::pow(ops::gather(ys[0], 1, ys[1]), 3.0)); };
        return grad(f, {0})({xs[0], xs[1]})[0];
      },
      (std::vector<Array>{random_array({2, 3}, 3), index2}));
}
