// pad in constant and reflect modes.
#include <limits>

#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {
using Widths = std::vector<std::pair<int64_t, int64_t>>;

// numpy's "reflect": -1 -> 1, n -> n - 2 (the edge is not repeated).
int64_t mirror(int64_t i, int64_t n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * (n - 1) - i;
  return i;
}

std::vector<double> expected_reflect(const Shape& shape, const Widths& w) {
  Shape out = shape;
  for (size_t d = 0; d < w.size(); ++d) out[d] += w[d].first + w[d].second;
  return expected_from(out, shape, [&](std::vector<int64_t> i) {
    for (size_t d = 0; d < w.size(); ++d) i[d] = mirror(i[d] - w[d].first, shape[d]);
    return i;
  });
}
}  // namespace

TEST(Pad, ConstantValues) {
  Tensor y = ops::pad(iota_tensor({2, 3}), {{1, 0}, {0, 2}}, ops::PadMode::Constant, 9.0);
  expect_shape(y, {3, 5});
  expect_close(y, {9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 3, 4, 5, 9, 9});
  // Missing trailing axes are not padded; zero is the default value.
  Tensor z = ops::pad(iota_tensor({2, 2}), {{0, 1}});
  expect_shape(z, {3, 2});
  expect_close(z, {0, 1, 2, 3, 0, 0});
  expect_close(ops::pad(iota_tensor({2}), {}), {0, 1});
  expect_close(ops::pad(ops::transpose(iota_tensor({2, 2})), {{1, 0}, {1, 0}}), {0, 0, 0, 0, 0, 2, 0, 1, 3});
}

TEST(Pad, ConstantDTypes) {
  Tensor i = ops::pad(Tensor::from_vector<int32_t>({5, 6}, {2}), {{1, 1}}, ops::PadMode::Constant, -3.0);
  EXPECT_EQ(i.dtype(), DType::i32);
  expect_close(i, {-3, 5, 6, -3});
  Tensor b = ops::pad(Tensor::from_vector<bool>({true}, {1}), {{2, 0}});
  EXPECT_EQ(b.dtype(), DType::boolean);
  expect_close(b, {0, 0, 1});
  Tensor h = ops::pad(Tensor::from_array(Array::from_vector<double>({1.5}, {1}).astype(DType::bf16)), {{0, 1}},
                      ops::PadMode::Constant, 0.25);
  EXPECT_EQ(h.dtype(), DType::bf16);
  expect_close(h, {1.5, 0.25});
}

TEST(Pad, ReflectValues) {
  Tensor y = ops::pad(iota_tensor({4}), {{2, 3}}, ops::PadMode::Reflect);
  expect_close(y, {2, 1, 0, 1, 2, 3, 2, 1, 0});
  // [[0, 1, 2], [3, 4, 5]] padded by rows (1, 1) and columns (2, 1): source rows 1, 0, 1, 0 and
  // source columns 2, 1, 0, 1, 2, 1.
  Tensor z = ops::pad(iota_tensor({2, 3}), {{1, 1}, {2, 1}}, ops::PadMode::Reflect);
  expect_shape(z, {4, 6});
  expect_close(z, {5, 4, 3, 4, 5, 4,  //
                   2, 1, 0, 1, 2, 1,  //
                   5, 4, 3, 4, 5, 4,  //
                   2, 1, 0, 1, 2, 1});
  const Widths w = {{1, 1}, {2, 1}};
  expect_close(z, expected_reflect({2, 3}, w));
  // A size-1 axis may be reflect-padded by nothing.
  expect_close(ops::pad(iota_tensor({1, 3}), {{0, 0}, {1, 1}}, ops::PadMode::Reflect), {1, 0, 1, 2, 1});
}

TEST(Pad, ReflectRank5AndDTypes) {
  const Shape shape = {2, 3, 1, 4, 3};
  const Widths w = {{1, 0}, {2, 2}, {0, 0}, {0, 3}, {2, 1}};
  Tensor y = ops::pad(iota_tensor(shape), w, ops::PadMode::Reflect);
  expect_shape(y, {3, 7, 1, 7, 6});
  expect_close(y, expected_reflect(shape, w));
  Tensor i = ops::pad(Tensor::from_vector<int64_t>({7, 8, 9}, {3}), {{2, 2}}, ops::PadMode::Reflect);
  EXPECT_EQ(i.dtype(), DType::i64);
  expect_close(i, {9, 8, 7, 8, 9, 8, 7});
}

TEST(Pad, Errors) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::pad(x, {{0, 0}, {3, 0}}, ops::PadMode::Reflect), "pad", "f32[2, 3]", "reflect", "axis 1",
                       "size 3", "(3, 0)");
  EXPECT_TESSERA_ERROR(ops::pad(x, {{0, 2}}, ops::PadMode::Reflect), "pad", "f32[2, 3]", "axis 0", "size 2");
  EXPECT_TESSERA_ERROR(ops::pad(x, {{-1, 0}}), "pad", "f32[2, 3]", "non-negative");
  EXPECT_TESSERA_ERROR(ops::pad(x, {{std::numeric_limits<int64_t>::max() - 1, 1}}), "pad", "f32[2, 3]", "too large");
  EXPECT_TESSERA_ERROR(ops::pad(x, {{0, 0}, {0, 0}, {1, 1}}), "pad", "f32[2, 3]", "3 (before, after) pairs", "rank 2");
  EXPECT_TESSERA_ERROR(
      ir::make_node1("pad", {x},
                     ir::Attrs{{"widths", std::vector<int64_t>{1}}, {"mode", std::string("constant")}, {"value", 0.0}}),
      "pad", "pairs");
  EXPECT_TESSERA_ERROR(
      ir::make_node1("pad", {x},
                     ir::Attrs{{"widths", std::vector<int64_t>{1, 1}}, {"mode", std::string("wrap")}, {"value", 0.0}}),
      "pad", "unknown mode 'wrap'");
}

TEST(Pad, ConstantGradient) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::pad(xs[0], {{1, 2}, {0, 0}, {3, 1}}, ops::PadMode::Constant, 2.5);
      },
      (std::vector<Array>{random_array({2, 3, 2}, 1)}));
}

TEST(Pad, ReflectGradient) {
  auto check = [](const Shape& shape, const Widths& w, uint64_t seed) {
    EXPECT_GRADIENTS_MATCH([w](const std::vector<Tensor>& xs) { return ops::pad(xs[0], w, ops::PadMode::Reflect); },
                           (std::vector<Array>{random_array(shape, seed)}));
  };
  check({5}, {{3, 4}}, 2);
  check({4}, {{0, 2}}, 3);
  check({3, 4}, {{2, 1}, {1, 3}}, 4);
  check({2, 3, 1, 3, 2}, {{1, 1}, {0, 2}, {0, 0}, {2, 0}, {1, 1}}, 5);  // rank 5
  // By hand: x = [a, b, c] reflect-padded by (2, 1) is [c, b, a, b, c, b]; d/dx of its sum is
  // [1, 3, 2].
  Tensor x = Tensor::from_vector<double>({1, 2, 3}, {3});
  auto g = grad([](const std::vector<Tensor>& xs) {
    return ops::sum(ops::pad(xs[0], {{2, 1}}, ops::PadMode::Reflect));
  })({x});
  expect_close(g[0], {1, 3, 2});
}

TEST(Pad, ReflectSecondOrder) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        auto f = [](const std::vector<Tensor>& ys) {
          return ops::sum(ops::pow(ops::pad(ys[0], {{1, 2}, {2, 1}}, ops::PadMode::Reflect), 3.0));
        };
        return grad(f)({xs[0]})[0];
      },
      (std::vector<Array>{random_array({3, 4}, 6)}));
}
