// Finite-difference gradient checks (f64) of every differentiable op of the family, including the
// gradient ops themselves (so that their own VJPs are checked) and second derivatives.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Gradient of sum(f(xs) * r) for a fixed random r, as a scalar function of xs again: sums every
// gradient weighted by fixed random tensors, so that checking it checks second derivatives.
Fn grad_of(const Fn& f, size_t n_inputs, uint64_t seed) {
  return [=](const std::vector<Tensor>& xs) {
    auto loss = [=](const std::vector<Tensor>& ys) {
      Tensor y = f(ys);
      return ops::sum(ops::square(y) * 0.5 + y * Tensor(random_array(y.shape(), seed)));
    };
    std::vector<Tensor> gs = grad(loss)(xs);
    Tensor total = ops::zeros({}, DType::f64);
    for (size_t i = 0; i < n_inputs; ++i)
      total = total + ops::sum(gs[i] * Tensor(random_array(gs[i].shape(), seed + 1 + i)));
    return total;
  };
}
}  // namespace

TEST(ConvGrad, Conv1dWithBiasStridePaddingDilationGroups) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::conv1d(xs[0], xs[1], xs[2], 2, 1, 2, 2); },
      (std::vector<Array>{random_array({2, 4, 9}, 1), random_array({6, 2, 3}, 2), random_array({6}, 3)}));
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::conv1d(xs[0], xs[1]); },
                         (std::vector<Array>{random_array({1, 2, 5}, 4), random_array({3, 2, 2}, 5)}));
}

TEST(ConvGrad, Conv2dStride2PaddingDilationGroups2) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::conv2d(xs[0], xs[1], xs[2], {2, 2}, {1, 2}, {2, 1}, 2);
      },
      (std::vector<Array>{random_array({2, 4, 7, 6}, 10), random_array({4, 2, 3, 3}, 11), random_array({4}, 12)}));
  // Asymmetric stride where the input is longer than the last window needs (trailing rows unused).
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::conv2d(xs[0], xs[1], {}, {3, 2});
      },
      (std::vector<Array>{random_array({1, 2, 9, 6}, 13), random_array({3, 2, 2, 3}, 14)}));
}

TEST(ConvGrad, Conv3d) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::conv(xs[0], xs[1], xs[2], {1, 2, 1}, {1, 0, 1}, {1, 1, 2});
      },
      (std::vector<Array>{random_array({1, 2, 3, 5, 4}, 15), random_array({2, 2, 2, 2, 2}, 16),
                          random_array({2}, 17)}));
}

TEST(ConvGrad, ConvTranspose2dWithOutputPadding) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::conv_transpose2d(xs[0], xs[1], xs[2], {2, 2}, {1, 0}, {1, 1}, {1, 1}, 2);
      },
      (std::vector<Array>{random_array({2, 4, 3, 3}, 20), random_array({4, 3, 3, 2}, 21), random_array({6}, 22)}));
  // output_padding >= stride (allowed since it is below the dilation): the gradient of the input is then a
  // convolution cropped to the input size.
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::conv_transpose2d(xs[0], xs[1], {}, {1, 1}, {0, 1}, {2, 1}, {3, 2});
      },
      (std::vector<Array>{random_array({1, 2, 3, 3}, 23), random_array({2, 2, 2, 2}, 24)}));
}

TEST(ConvGrad, GradientOpsAreDifferentiable) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::conv_input_grad(xs[0], xs[1], {7, 6}, {2, 1}, {1, 1}, {1, 2}, 2);
      },
      (std::vector<Array>{random_array({2, 4, 4, 4}, 30), random_array({4, 1, 2, 2}, 31)}));
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::conv_weight_grad(xs[0], xs[1], {2, 2}, {2, 1}, {1, 1}, {1, 2}, 2);
      },
      (std::vector<Array>{random_array({2, 2, 7, 6}, 32), random_array({2, 4, 4, 4}, 33)}));
}

TEST(ConvGrad, SecondDerivativeThroughConv2d) {
  auto f = [](const std::vector<Tensor>& xs) { return ops::conv2d(xs[0], xs[1], xs[2], {2, 1}, {1, 1}, {1, 2}, 2); };
  EXPECT_GRADIENTS_MATCH(
      grad_of(f, 3, 40),
      (std::vector<Array>{random_array({1, 4, 5, 6}, 41), random_array({2, 2, 3, 2}, 42), random_array({2}, 43)}));
}

TEST(ConvGrad, SecondDerivativeThroughConvTranspose2d) {
  auto f = [](const std::vector<Tensor>& xs) {
    return ops::conv_transpose2d(xs[0], xs[1], {}, {2, 2}, {1, 1}, {1, 0}, {1, 1});
  };
  EXPECT_GRADIENTS_MATCH(grad_of(f, 2, 50),
                         (std::vector<Array>{random_array({1, 2, 3, 3}, 51), random_array({2, 2, 3, 3}, 52)}));
}

TEST(PoolGrad, MaxPool2d) {
  // Random data (no ties); padding, stride and dilation together.
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::max_pool2d(xs[0], {3, 2}, {2, 1}, {1, 1}, {1, 2});
      },
      (std::vector<Array>{random_array({2, 2, 7, 6}, 60)}));
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::max_pool2d(xs[0], {2, 2});
      },
      (std::vector<Array>{random_array({1, 3, 4, 4}, 61)}));
}

TEST(PoolGrad, MaxPool2dSecondDerivative) {
  // The gradient of max_pool is linear in the cotangent (max_pool_grad) and its own gradient reads the
  // cotangent back at the argmax positions (max_pool_gather).
  auto f = [](const std::vector<Tensor>& xs) { return ops::max_pool2d(xs[0], {2, 2}, {1, 1}, {1, 1}); };
  EXPECT_GRADIENTS_MATCH(grad_of(f, 1, 62), (std::vector<Array>{random_array({1, 2, 4, 5}, 63)}));
}

TEST(PoolGrad, AvgPool2d) {
  for (bool include : {true, false}) {
    EXPECT_GRADIENTS_MATCH(
        [include](const std::vector<Tensor>& xs) {
          return ops::avg_pool2d(xs[0], {3, 2}, {2, 1}, {1, 1}, include);
        },
        (std::vector<Array>{random_array({2, 2, 7, 5}, 70)}));
  }
  auto f = [](const std::vector<Tensor>& xs) { return ops::avg_pool2d(xs[0], {2, 2}, {1, 1}, {1, 0}, false); };
  EXPECT_GRADIENTS_MATCH(grad_of(f, 1, 71), (std::vector<Array>{random_array({1, 2, 4, 4}, 72)}));
}

TEST(PoolGrad, AdaptiveAvgPool2d) {
  for (std::array<int64_t, 2> out : {std::array<int64_t, 2>{3, 2}, {4, 7}, {1, 1}}) {
    EXPECT_GRADIENTS_MATCH([out](const std::vector<Tensor>& xs) { return ops::adaptive_avg_pool2d(xs[0], out); },
                           (std::vector<Array>{random_array({2, 2, 5, 4}, 80)}));
  }
  auto f = [](const std::vector<Tensor>& xs) { return ops::adaptive_avg_pool2d(xs[0], {3, 2}); };
  EXPECT_GRADIENTS_MATCH(grad_of(f, 1, 81), (std::vector<Array>{random_array({1, 2, 5, 4}, 82)}));
}

TEST(UpsampleGrad, NearestAndBilinear) {
  for (std::array<int64_t, 2> size : {std::array<int64_t, 2>{7, 5}, {2, 3}}) {
    EXPECT_GRADIENTS_MATCH([size](const std::vector<Tensor>& xs) { return ops::upsample2d(xs[0], size); },
                           (std::vector<Array>{random_array({2, 2, 3, 4}, 90)}));
    for (bool align : {true, false}) {
      EXPECT_GRADIENTS_MATCH(
          [size, align](const std::vector<Tensor>& xs) {
            return ops::upsample2d(xs[0], size, ops::UpsampleMode::Bilinear, align);
          },
          (std::vector<Array>{random_array({2, 2, 3, 4}, 91)}));
    }
  }
  auto f = [](const std::vector<Tensor>& xs) { return ops::upsample2d(xs[0], {5, 7}, ops::UpsampleMode::Bilinear); };
  EXPECT_GRADIENTS_MATCH(grad_of(f, 1, 92), (std::vector<Array>{random_array({1, 2, 3, 4}, 93)}));
}

TEST(ConvGrad, HalfPrecisionGradientsKeepDtype) {
  Tensor x(random_array({1, 2, 5, 5}, 100, -1, 1, DType::bf16));
  Tensor w(random_array({3, 2, 3, 3}, 101, -1, 1, DType::bf16));
  auto loss = [](const std::vector<Tensor>& xs) {
    return ops::sum(ops::square(ops::conv2d(xs[0], xs[1], {}, {1, 1}, {1, 1})));
  };
  auto gs = grad(loss)({x, w});
  EXPECT_EQ(gs[0].dtype(), DType::bf16);
  EXPECT_EQ(gs[1].dtype(), DType::bf16);
  expect_shape(gs[0], {1, 2, 5, 5});
  // Close to the f64 gradient of the same (rounded) inputs.
  auto g64 = grad(loss)({Tensor(x.array().astype(DType::f64)), Tensor(w.array().astype(DType::f64))});
  expect_close(gs[0], g64[0].array().to_f64(), 0.05, 0.02);
  expect_close(gs[1], g64[1].array().to_f64(), 0.05, 0.02);
  // Max pooling routes bf16 gradients exactly like f64 ones.
  auto pool_loss = [](const std::vector<Tensor>& xs) { return ops::sum(ops::max_pool2d(xs[0], {2, 2}, {1, 1})); };
  Tensor gp = grad(pool_loss)({x})[0];
  EXPECT_EQ(gp.dtype(), DType::bf16);
  expect_close(gp, grad(pool_loss)({Tensor(x.array().astype(DType::f64))})[0].array().to_f64(), 0.0);
}
