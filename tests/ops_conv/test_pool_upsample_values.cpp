// Values of max/avg/adaptive pooling and nearest/bilinear upsampling: hand-computed cases and random
// cases against the direct-loop formulas of naive.h; also dtype behaviour and gradient routing.
#include "helpers.h"
#include "naive.h"

using namespace tessera;
using namespace tessera::test;
using conv_test::Pool2dArgs;

namespace {
std::vector<double> iota(int64_t n, double start = 1.0) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<double>(i));
  return v;
}
}  // namespace

TEST(MaxPool2d, HandComputed) {
  Tensor x = f64(iota(16), {1, 1, 4, 4});
  Tensor y = ops::max_pool2d(x, {2, 2});
  expect_shape(y, {1, 1, 2, 2});
  expect_close(y, {6, 8, 14, 16});
  // Stride 1, 3x3 windows.
  expect_close(ops::max_pool2d(x, {3, 3}, {1, 1}), {11, 12, 15, 16});
}

TEST(MaxPool2d, PaddingActsAsMinusInfinity) {
  // All values negative: zero padding would win every border window, -inf padding never does.
  std::vector<double> v = iota(9);
  for (double& e : v) e = -e;
  Tensor y = ops::max_pool2d(f64(v, {1, 3, 3}), {2, 2}, {1, 1}, {1, 1});
  expect_shape(y, {1, 4, 4});
  expect_close(y, {-1, -1, -2, -3, -1, -1, -2, -3, -4, -4, -5, -6, -7, -7, -8, -9});
}

TEST(MaxPool2d, DilationAndLeadingAxes) {
  // 5-D input: pooling acts on the last two axes only; dilation 2 picks the corners of 3x3 blocks.
  Tensor x = f64(iota(2 * 25), {2, 1, 1, 5, 5});
  Tensor y = ops::max_pool2d(x, {2, 2}, {2, 2}, {0, 0}, {2, 2});
  expect_shape(y, {2, 1, 1, 2, 2});
  // Window at (0, 0) reads (0,0), (0,2), (2,0), (2,2): max = x[2][2] = 13.
  expect_close(y, {13, 15, 23, 25, 38, 40, 48, 50});
}

TEST(MaxPool2d, MatchesNaiveFormula) {
  const std::vector<Pool2dArgs> cases = {
      {2, 2, 2, 2, 0, 0, 1, 1}, {3, 3, 2, 2, 1, 1, 1, 1}, {3, 2, 1, 2, 1, 1, 1, 1},
      {2, 3, 2, 1, 1, 0, 2, 2}, {3, 3, 3, 3, 0, 1, 1, 2},
  };
  uint64_t seed = 100;
  for (const Pool2dArgs& a : cases) {
    const Array xa = random_array({2, 3, 9, 8}, seed++);
    int64_t oh = 0, ow = 0;
    const std::vector<double> want = conv_test::naive_max_pool2d(xa.to_f64(), 6, 9, 8, a, &oh, &ow);
    Tensor y = ops::max_pool2d(Tensor(xa), {a.kh, a.kw}, {a.sh, a.sw}, {a.ph, a.pw}, {a.dh, a.dw});
    expect_shape(y, {2, 3, oh, ow});
    expect_close(y, want, 0.0);
  }
}

TEST(MaxPool2d, GradientGoesToFirstMaximum) {
  auto g = [](const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> s) {
    return grad([=](const std::vector<Tensor>& xs) { return ops::sum(ops::max_pool2d(xs[0], k, s)); })({x})[0];
  };
  // Ties: the first element in row-major scan order receives the gradient.
  expect_close(g(f64({1, 1, 1, 1}, {1, 1, 2, 2}), {2, 2}, {0, 0}), {1, 0, 0, 0});
  expect_close(g(f64({0, 5, 5, 5}, {1, 1, 2, 2}), {2, 2}, {0, 0}), {0, 1, 0, 0});
  // Overlapping windows that share their maximum add up.
  expect_close(g(f64({1, 3, 2}, {1, 1, 3}), {1, 2}, {1, 1}), {0, 2, 0});
}

TEST(MaxPool2d, DtypesAndNan) {
  Tensor xi = Tensor::from_vector<int32_t>({3, -7, 8, 1, 0, 2, -5, 4, 9}, {1, 3, 3});
  Tensor yi = ops::max_pool2d(xi, {2, 2}, {1, 1});
  EXPECT_EQ(yi.dtype(), DType::i32);
  EXPECT_EQ(yi.to_vector<int32_t>(), (std::vector<int32_t>{3, 8, 4, 9}));
  // Padding for integers is the lowest value, never a winner.
  std::vector<int64_t> neg = {-5, -6, -7, -8};
  Tensor yl = ops::max_pool2d(Tensor::from_vector<int64_t>(neg, {1, 2, 2}), {2, 2}, {2, 2}, {1, 1});
  EXPECT_EQ(yl.to_vector<int64_t>(), (std::vector<int64_t>{-5, -6, -7, -8}));
  Tensor xb = Tensor(random_array({1, 4, 4}, 5).astype(DType::bf16));
  const std::vector<double> want = ops::max_pool2d(Tensor(xb.array().astype(DType::f64)), {2, 2}).array().to_f64();
  Tensor yb = ops::max_pool2d(xb, {2, 2});
  EXPECT_EQ(yb.dtype(), DType::bf16);
  expect_close(yb, want, 0.0);
  // A NaN in a window propagates, as max does.
  const double nan = std::nan("");
  Tensor yn = ops::max_pool2d(f64({1, nan, 3, 4, 5, 6, 7, 8}, {1, 2, 4}), {2, 2});
  expect_close(yn, {nan, 8});
}

TEST(AvgPool2d, HandComputed) {
  Tensor x = f64(iota(16), {1, 1, 4, 4});
  expect_close(ops::avg_pool2d(x, {2, 2}), {3.5, 5.5, 11.5, 13.5});
  // 2x2 input, kernel 2, stride 2, padding 1: each window holds one real element.
  Tensor small = f64({1, 2, 3, 4}, {1, 2, 2});
  expect_close(ops::avg_pool2d(small, {2, 2}, {2, 2}, {1, 1}, true), {0.25, 0.5, 0.75, 1.0});
  expect_close(ops::avg_pool2d(small, {2, 2}, {2, 2}, {1, 1}, false), {1, 2, 3, 4});
}

TEST(AvgPool2d, MatchesNaiveFormula) {
  const std::vector<Pool2dArgs> cases = {
      {3, 3, 2, 2, 1, 1, 1, 1}, {2, 3, 1, 2, 1, 1, 1, 1}, {3, 2, 3, 1, 0, 1, 1, 1}, {2, 2, 2, 2, 0, 0, 1, 1}};
  uint64_t seed = 200;
  for (const Pool2dArgs& a : cases) {
    const Array xa = random_array({2, 2, 7, 9}, seed++);
    for (bool include : {true, false}) {
      const std::vector<double> want = conv_test::naive_avg_pool2d(xa.to_f64(), 4, 7, 9, a, include);
      Tensor y = ops::avg_pool2d(Tensor(xa), {a.kh, a.kw}, {a.sh, a.sw}, {a.ph, a.pw}, include);
      expect_close(y, want, 1e-12);
    }
  }
}

TEST(AdaptiveAvgPool2d, HandComputedBins) {
  // 5 -> 3: bins [0, 2), [1, 4), [3, 5).
  expect_close(ops::adaptive_avg_pool2d(f64({1, 2, 3, 4, 5}, {1, 1, 5}), {1, 3}), {1.5, 3, 4.5});
  // 2 -> 3 (upsampling bins): [0, 1), [0, 2), [1, 2).
  expect_close(ops::adaptive_avg_pool2d(f64({2, 4}, {1, 1, 2}), {1, 3}), {2, 3, 4});
  // Global pooling.
  Tensor g = ops::adaptive_avg_pool2d(f64(iota(12), {1, 2, 2, 3}), {1, 1});
  expect_shape(g, {1, 2, 1, 1});
  expect_close(g, {3.5, 9.5});
}

TEST(AdaptiveAvgPool2d, MatchesNaiveFormula) {
  const Array xa = random_array({2, 3, 10, 7}, 300);
  for (std::array<int64_t, 2> out : {std::array<int64_t, 2>{3, 4}, {10, 7}, {4, 11}, {1, 5}, {7, 3}}) {
    const std::vector<double> want = conv_test::naive_adaptive_avg_pool2d(xa.to_f64(), 6, 10, 7, out[0], out[1]);
    Tensor y = ops::adaptive_avg_pool2d(Tensor(xa), out);
    expect_shape(y, {2, 3, out[0], out[1]});
    expect_close(y, want, 1e-12);
  }
}

TEST(Upsample2d, NearestHandComputed) {
  Tensor x = f64({1, 2, 3, 4}, {1, 1, 2, 2});
  expect_close(ops::upsample2d(x, {4, 4}), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // 2 -> 3: src = floor(dst * 2 / 3) = 0, 0, 1.
  expect_close(ops::upsample2d(x, {3, 3}), {1, 1, 2, 1, 1, 2, 3, 3, 4});
  // Downsampling 5 -> 2: src = 0, 2.
  expect_close(ops::upsample2d(f64(iota(5), {5, 1}), {2, 1}), {1, 3});
}

TEST(Upsample2d, BilinearHandComputed) {
  Tensor x = f64({1, 2, 3, 4}, {1, 1, 2, 2});
  expect_close(ops::upsample2d(x, {3, 3}, ops::UpsampleMode::Bilinear, true), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  // align_corners = false, 2 -> 4 along one axis: src = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (upper clamp).
  expect_close(ops::upsample2d(f64({0, 1}, {1, 1, 1, 2}), {1, 4}, ops::UpsampleMode::Bilinear, false),
               {0, 0.25, 0.75, 1});
  // Same size is the identity in both conventions.
  const Array r = random_array({1, 2, 3, 5}, 9);
  expect_close(ops::upsample2d(Tensor(r), {3, 5}, ops::UpsampleMode::Bilinear, false), r.to_f64(), 1e-15);
  expect_close(ops::upsample2d(Tensor(r), {3, 5}, ops::UpsampleMode::Bilinear, true), r.to_f64(), 1e-15);
}

TEST(Upsample2d, MatchesNaiveFormula) {
  const Array xa = random_array({2, 2, 5, 4}, 400);
  for (std::array<int64_t, 2> out : {std::array<int64_t, 2>{10, 8}, {7, 9}, {3, 2}, {1, 6}, {5, 4}, {12, 1}}) {
    SCOPED_TRACE(std::to_string(out[0]) + "x" + std::to_string(out[1]));
    expect_close(ops::upsample2d(Tensor(xa), out),
                 conv_test::naive_upsample_nearest(xa.to_f64(), 4, 5, 4, out[0], out[1]), 0.0);
    for (bool align : {true, false}) {
      expect_close(ops::upsample2d(Tensor(xa), out, ops::UpsampleMode::Bilinear, align),
                   conv_test::naive_upsample_bilinear(xa.to_f64(), 4, 5, 4, out[0], out[1], align), 1e-12);
    }
  }
}

TEST(Upsample2d, NearestKeepsEveryDtype) {
  Tensor xi = Tensor::from_vector<int64_t>({int64_t(1) << 60, 2, -3, 4}, {1, 2, 2});
  Tensor yi = ops::upsample2d(xi, {2, 4});
  EXPECT_EQ(yi.dtype(), DType::i64);
  EXPECT_EQ(yi.to_vector<int64_t>(), (std::vector<int64_t>{int64_t(1) << 60, int64_t(1) << 60, 2, 2, -3, -3, 4, 4}));
  Tensor xb = Tensor::from_vector<bool>({true, false}, {1, 1, 2});
  Tensor yb = ops::upsample2d(xb, {1, 4});
  EXPECT_EQ(yb.dtype(), DType::boolean);
  EXPECT_EQ(yb.to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
  Tensor yh =
      ops::upsample2d(Tensor(random_array({1, 2, 2}, 1).astype(DType::f16)), {3, 3}, ops::UpsampleMode::Bilinear, true);
  EXPECT_EQ(yh.dtype(), DType::f16);
}
