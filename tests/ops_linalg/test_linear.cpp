// ops::linear (PyTorch's F.linear): values and gradients against PyTorch 1.13 (float64; the inputs are the
// ramps below, the gradient that of sum(y * ramp)), gradient checks and errors.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// ((i * mul) % mod) / div - sub over the flat index, as the PyTorch script made them.
Tensor ramp(const Shape& shape, int64_t mul, int64_t mod, double div, double sub) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((static_cast<int64_t>(i) * mul) % mod) / div - sub;
  return Tensor::from_vector<double>(v, shape);
}

}  // namespace

TEST(Linear, MatchesPyTorchValuesAndGradients) {
  const Tensor x = ramp({2, 3, 4}, 7919, 97, 8.0, 6.0);
  const Tensor w = ramp({5, 4}, 31, 11, 4.0, 1.0);  // [out, in], as torch.nn.Linear.weight
  const Tensor b = ramp({5}, 13, 7, 2.0, 1.5);
  const Tensor y = ops::linear(x, w, b);
  expect_shape(y, {2, 3, 5});
  expect_close(y, {6.0,     2.875,   -5.8125, -7.625,   7.0625,  -3.75,    9.96875,  -0.4375, -0.1875, -2.0,
                   4.6875,  -7.1875, 4.9375,  -1.84375, 4.09375, -2.03125, 12.03125, -1.8125, 2.5625,  1.09375,
                   6.40625, -5.125,  3.5625,  0.90625,  7.1875,  -9.40625, -4.09375, 2.875,   2.28125, -7.9375},
               1e-12);
  const Tensor weights = ramp({2, 3, 5}, 5, 9, 3.0, 1.0);
  const std::vector<Tensor> g =
      grad([&](const std::vector<Tensor>& a) { return ops::sum(ops::linear(a[0], a[1], a[2]) * weights); })({x, w, b});
  expect_close(g[0],
               {2.0,
                -1.5,
                0.5,
                0.6666666666666667,
                0.6666666666666663,
                0.41666666666666696,
                -0.75,
                -1.9166666666666663,
                -1.4166666666666667,
                3.0833333333333335,
                0.2500000000000002,
                -0.75,
                -2.0,
                -1.0,
                2.75,
                1.9166666666666665,
                1.916666666666667,
                -0.5833333333333335,
                1.5,
                0.8333333333333331,
                -0.9166666666666665,
                1.333333333333333,
                1.7499999999999998,
                1.25},
               1e-12);
  expect_close(g[1],
               {11.916666666666668,
                -8.958333333333334,
                -1.541666666666667,
                -2.208333333333334,
                0.5416666666666665,
                -0.4583333333333327,
                6.625,
                5.625000000000001,
                -1.0833333333333335,
                -5.458333333333333,
                14.416666666666666,
                -10.166666666666668,
                -8.333333333333334,
                7.166666666666668,
                -9.666666666666668,
                1.791666666666667,
                -5.833333333333334,
                6.291666666666667,
                2.2500000000000004,
                -9.875},
               1e-12);
  expect_close(g[2], {2.0, 3.0, 1.0, 2.0, 0.0}, 1e-12);
  // A vector input and no bias.
  expect_close(ops::linear(ramp({4}, 7919, 97, 8.0, 6.0), w), {7.5, 1.375, -6.8125, -8.125, 7.0625}, 1e-12);
}

TEST(Linear, GradientCheck) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& a) { return ops::linear(a[0], a[1], a[2]); },
      (std::vector<Array>{random_array({2, 3, 4}, 1), random_array({5, 4}, 2), random_array({5}, 3)}));
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& a) { return ops::linear(a[0], a[1]); },
                         (std::vector<Array>{random_array({3, 4}, 4), random_array({2, 4}, 5)}));
}

TEST(Linear, ShapeErrors) {
  const Tensor x = ops::zeros({3, 4}), w = ops::zeros({5, 4});
  // The weight is [out, in]: passing [in, out] (x @ W layout) names the convention.
  EXPECT_TESSERA_ERROR(ops::linear(x, ops::zeros({4, 5})), "linear", "f32[3, 4]", "f32[4, 5]", "input has 4 features",
                       "expects 5", "[out, in] as in PyTorch");
  EXPECT_TESSERA_ERROR(ops::linear(x, ops::zeros({4})), "linear", "weight must be 2-D");
  EXPECT_TESSERA_ERROR(ops::linear(x, w, ops::zeros({4})), "linear", "bias must be [5]", "got [4]");
  EXPECT_TESSERA_ERROR(ops::linear(ops::zeros({}), w), "linear", "at least one axis");
  EXPECT_TESSERA_ERROR(ops::linear(ops::zeros({3, 4}, DType::i32), w), "linear", "floating");
}
