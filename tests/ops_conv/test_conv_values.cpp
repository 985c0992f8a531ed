// Values of conv1d / conv2d / conv (N-d) / conv_transpose2d: hand-computed tiny cases, and random cases
// against the direct-loop formulas of naive.h over stride / padding / dilation / groups combinations.
#include <chrono>
#include <iostream>

#include "helpers.h"
#include "naive.h"

using namespace tessera;
using namespace tessera::test;
using conv_test::Conv2dArgs;

TEST(Conv2d, HandComputedDifferenceKernel) {
  // w = [[1, 0], [0, -1]]: y[i, j] = x[i, j] - x[i + 1, j + 1].
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  Tensor w = Tensor::from_vector<float>({1, 0, 0, -1}, {1, 1, 2, 2});
  Tensor y = ops::conv2d(x, w);
  expect_shape(y, {1, 1, 2, 2});
  expect_close(y, {-4, -4, -4, -4});
  expect_close(ops::conv2d(x, w, Tensor::from_vector<float>({0.5}, {1})), {-3.5, -3.5, -3.5, -3.5});
  // Zero padding 1: y[i, j] = x[i - 1, j - 1] - x[i, j] with x = 0 outside.
  Tensor yp = ops::conv2d(x, w, {}, {1, 1}, {1, 1});
  expect_shape(yp, {1, 1, 4, 4});
  expect_close(yp, {-1, -2, -3, 0, -4, -4, -4, 3, -7, -4, -4, 6, 0, 7, 8, 9});
}

TEST(Conv2d, HandComputedGroupsAndChannels) {
  // Depthwise: each channel scaled by its own 1x1 filter.
  Tensor x = f64({2, 3}, {1, 2, 1, 1});
  expect_close(ops::conv2d(x, f64({10, 100}, {2, 1, 1, 1}), {}, {1, 1}, {0, 0}, {1, 1}, 2), {20, 300});
  // groups = 1 mixes channels: out0 = 1*2 + 2*3, out1 = -1*2 + 0*3.
  expect_close(ops::conv2d(x, f64({1, 2, -1, 0}, {2, 2, 1, 1})), {8, -2});
}

TEST(Conv1d, HandComputedStrideDilation) {
  // K = 2 dilated by 2, stride 2: y[o] = x[2o] + x[2o + 2].
  Tensor x = f64({1, 2, 3, 4, 5, 6, 7}, {1, 1, 7});
  Tensor y = ops::conv1d(x, f64({1, 1}, {1, 1, 2}), {}, 2, 0, 2);
  expect_shape(y, {1, 1, 3});
  expect_close(y, {4, 8, 12});
  // Padding 1, bias 1, stride 3: windows [0, x0, x1] ... over the padded signal.
  Tensor y2 = ops::conv1d(x, f64({1, 10, 100}, {1, 1, 3}), f64({1}, {1}), 3, 1);
  expect_shape(y2, {1, 1, 3});
  expect_close(y2, {1 + 0 + 10 * 1 + 100 * 2, 1 + 3 + 10 * 4 + 100 * 5, 1 + 6 + 10 * 7 + 0});
}

TEST(Conv2d, MatchesNaiveFormulaOverParameterCombinations) {
  struct Case {
    Shape x, w;
    Conv2dArgs a;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {}, true},
      {{1, 2, 8, 9}, {3, 2, 3, 2}, {2, 3, 0, 0, 1, 1, 1}, false},
      {{2, 4, 9, 7}, {6, 2, 3, 3}, {2, 1, 1, 2, 2, 1, 2}, true},
      {{1, 6, 6, 6}, {6, 1, 3, 3}, {1, 1, 2, 2, 1, 2, 6}, true},  // depthwise
      {{3, 4, 5, 11}, {8, 1, 2, 4}, {3, 2, 1, 0, 2, 3, 4}, false},
      {{1, 2, 4, 4}, {2, 2, 4, 4}, {1, 1, 0, 0, 1, 1, 1}, true},   // kernel = input
      {{2, 3, 5, 5}, {3, 3, 1, 1}, {2, 2, 0, 0, 1, 1, 1}, false},  // 1x1, stride 2
  };
  uint64_t seed = 10;
  for (const Case& c : cases) {
    const Array xa = random_array(c.x, seed++), wa = random_array(c.w, seed++), ba = random_array({c.w[0]}, seed++);
    Shape out_shape;
    const std::vector<double> want = conv_test::naive_conv2d(
        xa.to_f64(), c.x, wa.to_f64(), c.w, c.bias ? ba.to_f64() : std::vector<double>{}, c.a, &out_shape);
    Tensor y = ops::conv2d(Tensor(xa), Tensor(wa), c.bias ? Tensor(ba) : Tensor(), {c.a.sh, c.a.sw}, {c.a.ph, c.a.pw},
                           {c.a.dh, c.a.dw}, c.a.groups);
    SCOPED_TRACE(shape_str(c.x) + " * " + shape_str(c.w));
    expect_shape(y, out_shape);
    expect_close(y, want, 1e-12);
    // f32 computes in the same way, rounded once.
    Tensor y32 = ops::conv2d(Tensor(xa.astype(DType::f32)), Tensor(wa.astype(DType::f32)),
                             c.bias ? Tensor(ba.astype(DType::f32)) : Tensor(), {c.a.sh, c.a.sw}, {c.a.ph, c.a.pw},
                             {c.a.dh, c.a.dw}, c.a.groups);
    EXPECT_EQ(y32.dtype(), DType::f32);
    expect_close(y32, want, 1e-5, 1e-5);
  }
}

TEST(Conv1d, MatchesNaiveFormula) {
  // conv1d over [N, C, L] is conv2d over [N, C, 1, L] with a 1 x K kernel.
  const Shape xs = {2, 4, 13}, ws = {6, 2, 3};
  const Array xa = random_array(xs, 3), wa = random_array(ws, 4), ba = random_array({6}, 5);
  Shape out_shape;
  const std::vector<double> want = conv_test::naive_conv2d(xa.to_f64(), {2, 4, 1, 13}, wa.to_f64(), {6, 2, 1, 3},
                                                           ba.to_f64(), {1, 2, 0, 1, 1, 3, 2}, &out_shape);
  Tensor y = ops::conv1d(Tensor(xa), Tensor(wa), Tensor(ba), 2, 1, 3, 2);
  expect_shape(y, {2, 6, out_shape[3]});
  expect_close(y, want, 1e-12);
}

TEST(Conv, ThreeSpatialAxesMatchNaiveLoops) {
  const Shape xs = {1, 2, 4, 5, 3}, ws = {2, 2, 2, 3, 2};
  const Array xa = random_array(xs, 7), wa = random_array(ws, 8);
  const std::vector<double> x = xa.to_f64(), w = wa.to_f64();
  // stride (1, 2, 1), padding (1, 0, 1), dilation (2, 1, 1).
  const int64_t OD = (4 + 2 - 2 - 1) / 1 + 1, OH = (5 - 3) / 2 + 1, OW = (3 + 2 - 1 - 1) / 1 + 1;
  std::vector<double> want;
  for (int64_t co = 0; co < 2; ++co)
    for (int64_t od = 0; od < OD; ++od)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t ci = 0; ci < 2; ++ci)
            for (int64_t kd = 0; kd < 2; ++kd)
              for (int64_t kh = 0; kh < 3; ++kh)
                for (int64_t kw = 0; kw < 2; ++kw) {
                  const int64_t id = od - 1 + 2 * kd, ih = oh * 2 + kh, iw = ow - 1 + kw;
                  if (id < 0 || id >= 4 || iw < 0 || iw >= 3) continue;
                  acc += w[static_cast<size_t>((((co * 2 + ci) * 2 + kd) * 3 + kh) * 2 + kw)] *
                         x[static_cast<size_t>(((ci * 4 + id) * 5 + ih) * 3 + iw)];
                }
          want.push_back(acc);
        }
  Tensor y = ops::conv(Tensor(xa), Tensor(wa), {}, {1, 2, 1}, {1, 0, 1}, {2, 1, 1});
  expect_shape(y, {1, 2, OD, OH, OW});
  expect_close(y, want, 1e-12);
}

TEST(ConvTranspose2d, HandComputed) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor ones = ops::ones({1, 1, 2, 2});
  // Stride 2 with a 2x2 kernel of ones copies each input into its own 2x2 block.
  Tensor y = ops::conv_transpose2d(x, ones, {}, {2, 2});
  expect_shape(y, {1, 1, 4, 4});
  expect_close(y, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // Stride 1: overlapping blocks add up.
  expect_close(ops::conv_transpose2d(x, ones), {1, 3, 2, 4, 10, 6, 3, 7, 4});
  // output_padding adds a row/column at the end that receives nothing (but the bias).
  Tensor yo = ops::conv_transpose2d(x, ones, Tensor::from_vector<float>({0.5}, {1}), {2, 2}, {0, 0}, {1, 0});
  expect_shape(yo, {1, 1, 5, 4});
  expect_close(yo,
               {1.5, 1.5, 2.5, 2.5, 1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 4.5, 4.5, 3.5, 3.5, 4.5, 4.5, 0.5, 0.5, 0.5, 0.5});
}

TEST(ConvTranspose2d, MatchesNaiveScatterFormula) {
  struct Case {
    Shape x, w;
    Conv2dArgs a;
    int64_t oph, opw;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4, 5}, {3, 2, 3, 3}, {}, 0, 0, true},
      {{1, 4, 3, 4}, {4, 3, 3, 2}, {2, 2, 1, 0, 1, 1, 2}, 1, 1, true},
      {{2, 2, 5, 3}, {2, 2, 2, 3}, {3, 2, 1, 1, 2, 1, 1}, 2, 0, false},
      {{1, 2, 3, 3}, {2, 1, 2, 2}, {1, 1, 0, 0, 3, 2, 1}, 2, 1, true},   // output_padding >= stride, < dilation
      {{1, 6, 4, 4}, {6, 1, 3, 3}, {2, 2, 1, 1, 1, 1, 6}, 1, 0, false},  // depthwise
  };
  uint64_t seed = 40;
  for (const Case& c : cases) {
    const Array xa = random_array(c.x, seed++), wa = random_array(c.w, seed++);
    const Array ba = random_array({c.w[1] * c.a.groups}, seed++);
    Shape out_shape;
    const std::vector<double> want =
        conv_test::naive_conv_transpose2d(xa.to_f64(), c.x, wa.to_f64(), c.w,
                                          c.bias ? ba.to_f64() : std::vector<double>{}, c.a, c.oph, c.opw, &out_shape);
    Tensor y = ops::conv_transpose2d(Tensor(xa), Tensor(wa), c.bias ? Tensor(ba) : Tensor(), {c.a.sh, c.a.sw},
                                     {c.a.ph, c.a.pw}, {c.oph, c.opw}, {c.a.dh, c.a.dw}, c.a.groups);
    SCOPED_TRACE(shape_str(c.x) + " *T " + shape_str(c.w));
    expect_shape(y, out_shape);
    expect_close(y, want, 1e-12);
  }
}

TEST(Conv2d, GradientOpsMatchNaiveAdjoints) {
  // <g, conv(x, w)> = <conv_input_grad(g, w), x> = <conv_weight_grad(x, g), w>, checked numerically
  // on an asymmetric configuration, with the explicit gradient functions.
  const Shape xs = {2, 4, 7, 6}, ws = {6, 2, 3, 2};
  const std::vector<int64_t> stride = {2, 1}, pad = {1, 2}, dil = {1, 2};
  const Array xa = random_array(xs, 70), wa = random_array(ws, 71);
  Tensor y = ops::conv(Tensor(xa), Tensor(wa), {}, stride, pad, dil, 2);
  const Array ga = random_array(y.shape(), 72);
  const double lhs = ops::sum(y * Tensor(ga)).item();
  Tensor dx = ops::conv_input_grad(Tensor(ga), Tensor(wa), {7, 6}, stride, pad, dil, 2);
  Tensor dw = ops::conv_weight_grad(Tensor(xa), Tensor(ga), {3, 2}, stride, pad, dil, 2);
  expect_shape(dx, xs);
  expect_shape(dw, ws);
  EXPECT_NEAR(ops::sum(dx * Tensor(xa)).item(), lhs, 1e-10);
  EXPECT_NEAR(ops::sum(dw * Tensor(wa)).item(), lhs, 1e-10);
}

TEST(Conv2d, HalfPrecisionComputesInFloat) {
  const Array xa = random_array({2, 3, 6, 6}, 80), wa = random_array({4, 3, 3, 3}, 81);
  for (DType dt : {DType::f16, DType::bf16}) {
    // Expected: the exact convolution of the rounded inputs; the op adds only the final rounding.
    Shape out_shape;
    const std::vector<double> want = conv_test::naive_conv2d(xa.astype(dt).to_f64(), {2, 3, 6, 6},
                                                             wa.astype(dt).to_f64(), {4, 3, 3, 3}, {}, {}, &out_shape);
    Tensor y = ops::conv2d(Tensor(xa.astype(dt)), Tensor(wa.astype(dt)));
    EXPECT_EQ(y.dtype(), dt);
    expect_close(y, want, 1e-6, dt == DType::f16 ? 1e-3 : 8e-3);
  }
}

TEST(Conv2d, MnistSizedLayerMatchesTheFormula) {
  // 64 x 1 x 28 x 28 images, 32 filters of 3 x 3 (timing belongs in benchmarks, not tests).
  Tensor x(random_array({64, 1, 28, 28}, 90, -1, 1, DType::f32));
  Tensor w(random_array({32, 1, 3, 3}, 91, -1, 1, DType::f32));
  Tensor b(random_array({32}, 92, -1, 1, DType::f32));
  Tensor y = ops::conv2d(x, w, b);
  expect_shape(y, {64, 32, 26, 26});
  // Spot-check one output against the formula.
  const std::vector<double> xv = x.array().to_f64(), wv = w.array().to_f64();
  double acc = b.array().to_f64()[5];
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j)
      acc += wv[static_cast<size_t>(5 * 9 + i * 3 + j)] * xv[static_cast<size_t>(7 * 784 + (10 + i) * 28 + 4 + j)];
  EXPECT_NEAR(y.array().to_f64()[static_cast<size_t>(((7 * 32 + 5) * 26 + 10) * 26 + 4)], acc, 1e-5);
}

TEST(Conv2d, GraphRoundTripsThroughText) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& xs) {
        Tensor h = ops::conv2d(xs[0], xs[1], {}, {2, 2}, {1, 1}, {1, 1}, 1);
        Tensor p = ops::max_pool2d(h, {2, 2});
        return std::vector<Tensor>{ops::upsample2d(p, {4, 4}, ops::UpsampleMode::Bilinear, true),
                                   ops::conv_transpose2d(h, xs[2], {}, {2, 2}, {0, 0}, {1, 1})};
      },
      {{DType::f32, {1, 2, 9, 9}}, {DType::f32, {3, 2, 3, 3}}, {DType::f32, {3, 2, 2, 2}}}, {"x", "w", "wt"});
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  ir::Graph back = ir::parse_graph(text);
  ir::verify(back);
  EXPECT_EQ(ir::print_graph(back), text) << text;
}
