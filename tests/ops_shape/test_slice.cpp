// slice (Python semantics), its adjoint slice_backward, and flip.
#include <limits>

#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {
using ops::kBegin;
using ops::kEnd;

std::vector<double> slice1(int64_t start, int64_t stop, int64_t step) {
  return ops::slice(iota_tensor({6}), 0, start, stop, step).array().to_f64();
}
}  // namespace

TEST(Slice, PythonSemanticsOnOneAxis) {
  using V = std::vector<double>;
  EXPECT_EQ(slice1(1, 4, 1), (V{1, 2, 3}));   // x[1:4]
  EXPECT_EQ(slice1(-2, kEnd, 1), (V{4, 5}));  // x[-2:]
  EXPECT_EQ(slice1(0, 6, 2), (V{0, 2, 4}));   // x[::2]
  EXPECT_EQ(slice1(1, 6, 2), (V{1, 3, 5}));   // x[1::2]
  EXPECT_EQ(slice1(0, -1, 4), (V{0, 4}));     // x[:-1:4]
  EXPECT_EQ(slice1(-100, 100, 1), (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(slice1(100, kEnd, 1), V{});                      // x[100:]
  EXPECT_EQ(slice1(2, 2, 1), V{});                           // x[2:2]
  EXPECT_EQ(slice1(4, 1, 1), V{});                           // x[4:1]
  EXPECT_EQ(slice1(-1, kBegin, -1), (V{5, 4, 3, 2, 1, 0}));  // x[::-1]
  EXPECT_EQ(slice1(10, kBegin, -1), (V{5, 4, 3, 2, 1, 0}));  // x[10::-1]
  EXPECT_EQ(slice1(kEnd, kBegin, -2), (V{5, 3, 1}));         // x[::-2]
  EXPECT_EQ(slice1(4, 1, -1), (V{4, 3, 2}));                 // x[4:1:-1]
  EXPECT_EQ(slice1(4, -6, -1), (V{4, 3, 2, 1}));             // x[4:-6:-1]
  EXPECT_EQ(slice1(4, -7, -3), (V{4, 1}));                   // x[4:-7:-3]
  EXPECT_EQ(slice1(1, 4, -1), V{});                          // x[1:4:-1]
  EXPECT_EQ(slice1(-7, kBegin, -1), V{});                    // x[-7::-1]
  EXPECT_EQ(slice1(0, 6, kEnd), (V{0}));
  EXPECT_EQ(slice1(5, kBegin, kBegin), (V{5}));
}

// The named bounds say what Python's omitted ones do; slice(x, axis, start) is x[start:].
TEST(Slice, NamedBoundsAndToTheEnd) {
  using V = std::vector<double>;
  EXPECT_EQ(slice1(2, kEnd, 1), (V{2, 3, 4, 5}));              // x[2:]
  EXPECT_EQ(slice1(kBegin, 3, 1), (V{0, 1, 2}));               // x[:3]
  EXPECT_EQ(slice1(kBegin, kEnd, 2), (V{0, 2, 4}));            // x[::2]
  EXPECT_EQ(slice1(kEnd, kBegin, -1), (V{5, 4, 3, 2, 1, 0}));  // x[::-1]
  EXPECT_EQ(slice1(kEnd, 2, -1), (V{5, 4, 3}));                // x[:2:-1]
  const Tensor x = iota_tensor({3, 4});
  expect_close(ops::slice(x, 1, 1), {1, 2, 3, 5, 6, 7, 9, 10, 11});  // x[:, 1:]
  expect_close(ops::slice(x, 0, -1), {8, 9, 10, 11});                // x[-1:]
  expect_shape(ops::slice(x, 0, 7), {0, 4});                         // x[7:]
  EXPECT_EQ(ops::slice(x, 1, 1).value().node()->attrs().get_int("stop"), ops::kEnd);
}

TEST(Slice, ShapesAndViews) {
  Tensor x = iota_tensor({3, 4});
  Tensor y = ops::slice(x, -1, 1, 3);
  expect_shape(y, {3, 2});
  expect_close(y, {1, 2, 5, 6, 9, 10});
  EXPECT_TRUE(y.array().shares_storage_with(x.array()));
  Tensor r = ops::slice(x, 0, kEnd, kBegin, -1);
  expect_close(r, {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});
  EXPECT_TRUE(r.array().shares_storage_with(x.array()));
  expect_shape(ops::slice(x, 0, 5, 9), {0, 4});
  // Slicing a slice composes.
  expect_close(ops::slice(ops::slice(x, 1, 3, kBegin, -1), 0, 1, 3), {7, 6, 5, 4, 11, 10, 9, 8});
}

TEST(Slice, Rank5NegativeStep) {
  const Shape shape = {2, 1, 3, 5, 2};
  Tensor y = ops::slice(iota_tensor(shape), 3, -1, 0, -2);  // x[:, :, :, -1:0:-2] -> indices 4, 2
  expect_shape(y, {2, 1, 3, 2, 2});
  expect_close(y, expected_from({2, 1, 3, 2, 2}, shape, [](std::vector<int64_t> i) {
                 i[3] = 4 - 2 * i[3];
                 return i;
               }));
}

TEST(Slice, KeepsDTypes) {
  Tensor b = Tensor::from_vector<bool>({true, false, true, true}, {4});
  Tensor s = ops::slice(b, 0, 0, kEnd, 3);
  EXPECT_EQ(s.dtype(), DType::boolean);
  expect_close(s, {1, 1});
  Tensor h = Tensor::from_array(Array::from_vector<double>({1.5, 2.5, -3}, {3}).astype(DType::bf16));
  Tensor hs = ops::slice(h, 0, 2, kBegin, -1);
  EXPECT_EQ(hs.dtype(), DType::bf16);
  expect_close(hs, {-3, 2.5, 1.5});
}

TEST(Slice, Errors) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::slice(x, 1, 0, 3, 0), "slice", "f32[2, 3]", "step must not be zero");
  EXPECT_TESSERA_ERROR(ops::slice(x, 2, 0, 1), "slice", "f32[2, 3]", "axis 2", "rank 2");
  EXPECT_TESSERA_ERROR(ops::slice(x, -3, 0, 1), "slice", "f32[2, 3]", "axis -3");
  EXPECT_TESSERA_ERROR(ops::slice(ops::full({}, 1.0), 0, 0, 1), "slice", "f32[]", "scalar");
}

TEST(Slice, Gradients) {
  auto check = [](int64_t axis, int64_t start, int64_t stop, int64_t step, const Shape& shape, uint64_t seed) {
    EXPECT_GRADIENTS_MATCH([=](const std::vector<Tensor>& xs) { return ops::slice(xs[0], axis, start, stop, step); },
                           (std::vector<Array>{random_array(shape, seed)}));
  };
  check(0, 1, 4, 1, {6}, 1);
  check(0, 1, kEnd, 2, {7}, 2);
  check(1, -1, kBegin, -1, {2, 5}, 3);            // reversal
  check(1, 4, 0, -3, {3, 6}, 4);                  // negative step with a gap
  check(-2, -1, kBegin, -2, {2, 1, 5, 3, 2}, 5);  // rank 5
  check(0, 3, 3, 1, {4, 2}, 6);                   // empty slice: zero gradient
}

TEST(Slice, GradientValuesAndSecondOrder) {
  // d/dx sum(x[4:0:-2]^2) = 2 x at positions 4 and 2, zero elsewhere.
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {6});
  auto f = [](const std::vector<Tensor>& xs) { return ops::sum(ops::square(ops::slice(xs[0], 0, 4, 0, -2))); };
  expect_close(grad(f)({x})[0], {0, 0, 6, 0, 10, 0});
  // The gradient graph (slice_backward) is differentiable again.
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        auto g = [](const std::vector<Tensor>& ys) {
          return ops::sum(ops::pow(ops::slice(ys[0], 1, 3, kBegin, -2), 3.0));
        };
        return grad(g)({xs[0]})[0];
      },
      (std::vector<Array>{random_array({2, 5}, 7)}));
}

TEST(SliceBackward, PlacesValuesAtTheSlicePositions) {
  Tensor g = Tensor::from_vector<float>({1, 2, 3}, {3});
  expect_close(ops::slice_backward(g, 0, 4, -2, 6), {3, 0, 2, 0, 1, 0});
  expect_close(ops::slice_backward(g, 0, 1, 2, 6), {0, 1, 0, 2, 0, 3});
  Tensor g2 = Tensor::from_vector<int32_t>({7, 8}, {2, 1});
  Tensor out = ops::slice_backward(g2, 1, 2, 1, 4);
  EXPECT_EQ(out.dtype(), DType::i32);
  expect_close(out, {0, 0, 7, 0, 0, 0, 8, 0});
  expect_close(ops::slice_backward(ops::zeros({2, 0}), 1, 0, 1, 3), {0, 0, 0, 0, 0, 0});
}

TEST(SliceBackward, Errors) {
  Tensor g = ops::zeros({3});
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 0, 4, 1, 6), "slice_backward", "f32[3]", "do not fit", "size 6");
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 0, 1, -2, 6), "slice_backward", "do not fit");
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 0, 6, 1, 6), "slice_backward", "do not fit");
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 0, 0, kEnd, 6), "slice_backward", "do not fit");
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 0, 5, kBegin, 6), "slice_backward", "do not fit");
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 0, 0, 0, 6), "slice_backward", "step must not be zero");
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 0, 0, 1, -1), "slice_backward", "size must be non-negative");
  EXPECT_TESSERA_ERROR(ops::slice_backward(g, 1, 0, 1, 4), "slice_backward", "axis 1");
}

TEST(SliceBackward, Gradient) {
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::slice_backward(xs[0], 1, 5, -2, 7); },
                         (std::vector<Array>{random_array({2, 3}, 8)}));
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::slice_backward(xs[0], 0, 0, 3, 7); },
                         (std::vector<Array>{random_array({3, 2}, 9)}));
}

TEST(Flip, ValuesOnAnyAxes) {
  Tensor x = iota_tensor({2, 3});
  expect_close(ops::flip(x, {0}), {3, 4, 5, 0, 1, 2});
  expect_close(ops::flip(x, {1}), {2, 1, 0, 5, 4, 3});
  expect_close(ops::flip(x, {0, -1}), {5, 4, 3, 2, 1, 0});
  expect_close(ops::flip(x, {}), {0, 1, 2, 3, 4, 5});
  EXPECT_TRUE(ops::flip(x, {0, 1}).array().shares_storage_with(x.array()));
  expect_shape(ops::flip(ops::zeros({0, 2}), {0}), {0, 2});
}

TEST(Flip, Rank5) {
  const Shape shape = {2, 3, 1, 2, 4};
  expect_close(ops::flip(iota_tensor(shape), {0, 3, -1}), expected_from(shape, shape, [](std::vector<int64_t> i) {
                 i[0] = 1 - i[0];
                 i[3] = 1 - i[3];
                 i[4] = 3 - i[4];
                 return i;
               }));
}

TEST(Flip, Errors) {
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::flip(x, {0, -2}), "flip", "f32[2, 3]", "more than once");
  EXPECT_TESSERA_ERROR(ops::flip(x, {2}), "flip", "f32[2, 3]", "axis 2");
}

TEST(Flip, Gradient) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::flip(xs[0], {1, 3}) * xs[0];
      },
      (std::vector<Array>{random_array({2, 3, 1, 4}, 10)}));
}
