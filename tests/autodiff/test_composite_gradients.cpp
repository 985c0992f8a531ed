// Finite-difference gradient checks (f64) of whole models rather than single ops: an MLP with two
// kinds of loss, an attention block with a residual and a normalisation built from mean/var, and a
// small convolutional network. Every weight and every floating input is checked.
#include <cmath>

#include "gradcheck_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Array targets_i64(const std::vector<int64_t>& classes) {
  return Array::from_vector(classes, {static_cast<int64_t>(classes.size())});
}

// a: x [N, 3], w1 [3, 5], b1 [5], w2 [5, 2], b2 [2], y [N, 2]; tanh hidden layer, mean-squared error.
Tensor mlp_tanh_mse(const std::vector<Tensor>& a) {
  Tensor h = ops::tanh(ops::matmul(a[0], a[1]) + a[2]);
  Tensor pred = ops::matmul(h, a[3]) + a[4];
  return ops::mse_loss(pred, a[5]);
}

// a: x [N, 3], w1 [3, 6], b1 [6], w2 [6, 4], b2 [4], targets i64 [N]; relu hidden layer, softmax
// cross-entropy on the logits.
Tensor mlp_relu_cross_entropy(const std::vector<Tensor>& a) {
  Tensor h = ops::relu(ops::matmul(a[0], a[1]) + a[2]);
  Tensor logits = ops::matmul(h, a[3]) + a[4];
  return ops::cross_entropy(logits, a[5]);
}

// Normalises the last axis with statistics computed from mean and (biased) var.
Tensor normalize_last_axis(const Tensor& h, const Tensor& gamma, const Tensor& beta, double eps) {
  const int64_t last = h.rank() - 1;
  Tensor centred = h - ops::mean(h, {last}, true);
  Tensor variance = ops::var(h, {last}, 0, true);
  return centred / ops::sqrt(variance + eps) * gamma + beta;
}

// a: x [B, L, D], wq, wk, wv, wo [D, D], gamma, beta [D]. Single-head self-attention with a residual
// connection and a layer-norm-like normalisation.
Tensor attention_block(const std::vector<Tensor>& a, double eps = 1e-5) {
  const Tensor& x = a[0];
  Tensor q = ops::matmul(x, a[1]), k = ops::matmul(x, a[2]), v = ops::matmul(x, a[3]);
  const double scale = 1.0 / std::sqrt(static_cast<double>(x.dim(-1)));
  Tensor scores = ops::matmul(q, ops::transpose(k, -2, -1)) * scale;
  Tensor attended = ops::matmul(ops::softmax(scores, -1), v);
  Tensor h = x + ops::matmul(attended, a[4]);
  return normalize_last_axis(h, a[5], a[6], eps);
}

// a: x [N, 1, 6, 6], conv weight [3, 1, 3, 3], conv bias [3], fc weight [12, 4], fc bias [4].
// conv2d -> relu -> 2x2 max-pool -> flatten -> matmul: logits [N, 4].
Tensor conv_net(const std::vector<Tensor>& a) {
  Tensor c = ops::relu(ops::conv2d(a[0], a[1], a[2]));
  Tensor p = ops::max_pool2d(c, {2, 2});
  Tensor flat = ops::flatten(p, 1);
  return ops::matmul(flat, a[3]) + a[4];
}

}  // namespace

TEST(CompositeGradients, MlpTanhMeanSquaredError) {
  const std::vector<Array> inputs{random_array({4, 3}, 1), random_array({3, 5}, 2), random_array({5}, 3),
                                  random_array({5, 2}, 4), random_array({2}, 5),    random_array({4, 2}, 6)};
  const Tensor loss = mlp_tanh_mse([&] {
    std::vector<Tensor> t;
    for (const Array& a : inputs) t.push_back(Tensor::from_array(a));
    return t;
  }());
  EXPECT_EQ(loss.numel(), 1);
  EXPECT_EQ(loss.dtype(), DType::f64);
  expect_nonzero_gradients(mlp_tanh_mse, inputs);
  EXPECT_GRADIENTS_MATCH(mlp_tanh_mse, inputs);
}

TEST(CompositeGradients, MlpReluSoftmaxCrossEntropy) {
  // Inputs in [-2, 2] so that the relu units are neither all dead nor all linear.
  const std::vector<Array> inputs{random_array({5, 3}, 11, -2, 2), random_array({3, 6}, 12),
                                  random_array({6}, 13),           random_array({6, 4}, 14),
                                  random_array({4}, 15),           targets_i64({0, 3, 1, 3, 2})};
  expect_nonzero_gradients(mlp_relu_cross_entropy, inputs);
  EXPECT_GRADIENTS_MATCH(mlp_relu_cross_entropy, inputs);
}

TEST(CompositeGradients, MlpCrossEntropyMatchesLogSoftmaxFormula) {
  // The same loss written out from log_softmax and one_hot: values and gradients must agree.
  const std::vector<Array> inputs{random_array({3, 3}, 21), random_array({3, 6}, 22), random_array({6}, 23),
                                  random_array({6, 4}, 24), random_array({4}, 25),    targets_i64({2, 0, 3})};
  const Fn by_hand = [](const std::vector<Tensor>& a) {
    Tensor h = ops::relu(ops::matmul(a[0], a[1]) + a[2]);
    Tensor logp = ops::log_softmax(ops::matmul(h, a[3]) + a[4], -1);
    Tensor picked = ops::sum(logp * ops::one_hot(a[5], 4, DType::f64), {1});
    return -ops::mean(picked);
  };
  EXPECT_GRADIENTS_MATCH(by_hand, inputs);
  std::vector<Tensor> args;
  for (const Array& a : inputs) args.push_back(Tensor::from_array(a));
  EXPECT_NEAR(mlp_relu_cross_entropy(args).item(), by_hand(args).item(), 1e-12);
  const std::vector<size_t> wrt{0, 1, 2, 3, 4};
  const auto g1 = grad(mlp_relu_cross_entropy, wrt)(args);
  const auto g2 = grad(by_hand, wrt)(args);
  for (size_t i = 0; i < wrt.size(); ++i) expect_close(g1[i], g2[i].array().to_f64(), 1e-12, 1e-10);
}

TEST(CompositeGradients, AttentionBlock) {
  const int64_t d = 4;
  const std::vector<Array> inputs{
      random_array({2, 3, d}, 31), random_array({d, d}, 32),        random_array({d, d}, 33), random_array({d, d}, 34),
      random_array({d, d}, 35),    random_array({d}, 36, 0.5, 1.5), random_array({d}, 37)};
  const Fn block = [](const std::vector<Tensor>& a) { return attention_block(a); };
  expect_nonzero_gradients(block, inputs);
  EXPECT_GRADIENTS_MATCH(block, inputs);
  // A scalar loss on top, as in training.
  const Fn loss = [](const std::vector<Tensor>& a) { return ops::mean(ops::square(attention_block(a))); };
  EXPECT_GRADIENTS_MATCH(loss, inputs);
}

TEST(CompositeGradients, AttentionBlockNormalisationIsNormalised) {
  // With gamma = 1, beta = 0 and no epsilon the block's output has zero mean and unit (biased)
  // variance per position: a value check that the composite computes what the gradient check
  // differentiates.
  std::vector<Tensor> args;
  for (const Array& a : {random_array({2, 3, 4}, 41), random_array({4, 4}, 42), random_array({4, 4}, 43),
                         random_array({4, 4}, 44), random_array({4, 4}, 45)}) {
    args.push_back(Tensor::from_array(a));
  }
  args.push_back(ops::ones({4}, DType::f64));
  args.push_back(ops::zeros({4}, DType::f64));
  const Tensor y = attention_block(args, 0.0);
  expect_close(ops::mean(y, {2}), std::vector<double>(6, 0.0), 1e-12);
  expect_close(ops::var(y, {2}, 0), std::vector<double>(6, 1.0), 1e-12, 1e-12);
}

TEST(CompositeGradients, AttentionBlockWithLibraryOps) {
  // The same block from scaled_dot_product_attention and layer_norm.
  const Fn fused = [](const std::vector<Tensor>& a) {
    const Tensor& x = a[0];
    Tensor attended =
        ops::scaled_dot_product_attention(ops::matmul(x, a[1]), ops::matmul(x, a[2]), ops::matmul(x, a[3]));
    return ops::layer_norm(x + ops::matmul(attended, a[4]), {x.dim(-1)}, a[5], a[6], 1e-5);
  };
  const std::vector<Array> inputs{
      random_array({2, 3, 4}, 51), random_array({4, 4}, 52),        random_array({4, 4}, 53), random_array({4, 4}, 54),
      random_array({4, 4}, 55),    random_array({4}, 56, 0.5, 1.5), random_array({4}, 57)};
  std::vector<Tensor> args;
  for (const Array& a : inputs) args.push_back(Tensor::from_array(a));
  expect_close(fused(args), attention_block(args).array().to_f64(), 1e-10, 1e-9);
  EXPECT_GRADIENTS_MATCH(fused, inputs);
}

TEST(CompositeGradients, ConvNet) {
  const std::vector<Array> inputs{random_array({2, 1, 6, 6}, 61), random_array({3, 1, 3, 3}, 62), random_array({3}, 63),
                                  random_array({12, 4}, 64), random_array({4}, 65)};
  const Tensor logits = conv_net([&] {
    std::vector<Tensor> t;
    for (const Array& a : inputs) t.push_back(Tensor::from_array(a));
    return t;
  }());
  EXPECT_EQ(logits.shape(), (Shape{2, 4}));
  expect_nonzero_gradients(conv_net, inputs);
  EXPECT_GRADIENTS_MATCH(conv_net, inputs);
}

TEST(CompositeGradients, ConvNetStridedAndPadded) {
  // Two input channels, stride 2 with padding 1, then an overlapping 2x2 pool with stride 1.
  const Fn net = [](const std::vector<Tensor>& a) {
    Tensor c = ops::relu(ops::conv2d(a[0], a[1], a[2], {2, 2}, {1, 1}));
    Tensor p = ops::max_pool2d(c, {2, 2}, {1, 1});
    return ops::matmul(ops::flatten(p, 1), a[3]);
  };
  const std::vector<Array> inputs{random_array({1, 2, 5, 5}, 91), random_array({2, 2, 3, 3}, 92), random_array({2}, 93),
                                  random_array({8, 3}, 94)};
  std::vector<Tensor> args;
  for (const Array& a : inputs) args.push_back(Tensor::from_array(a));
  EXPECT_EQ(net(args).shape(), (Shape{1, 3}));
  expect_nonzero_gradients(net, inputs);
  EXPECT_GRADIENTS_MATCH(net, inputs);
}

TEST(CompositeGradients, ConvNetWithCrossEntropyLoss) {
  const std::vector<Array> inputs{random_array({2, 1, 6, 6}, 71), random_array({3, 1, 3, 3}, 72), random_array({3}, 73),
                                  random_array({12, 4}, 74),      random_array({4}, 75),          targets_i64({3, 1})};
  const Fn loss = [](const std::vector<Tensor>& a) {
    return ops::cross_entropy(conv_net({a[0], a[1], a[2], a[3], a[4]}), a[5]);
  };
  EXPECT_GRADIENTS_MATCH(loss, inputs);
}

TEST(CompositeGradients, GradientPenaltyThroughAnMlp) {
  // Differentiating a gradient: d/dW of ||dL/dx||^2 (as in WGAN-GP) needs second derivatives of
  // matmul, tanh, add and mse through the whole network.
  const Fn penalty = [](const std::vector<Tensor>& a) {
    Tensor dx = grad(mlp_tanh_mse, {0})(a)[0];
    return ops::sum(ops::square(dx));
  };
  const std::vector<Array> inputs{random_array({3, 3}, 81), random_array({3, 5}, 82), random_array({5}, 83),
                                  random_array({5, 2}, 84), random_array({2}, 85),    random_array({3, 2}, 86)};
  expect_nonzero_gradients(penalty, inputs);
  EXPECT_GRADIENTS_MATCH(penalty, inputs);
}
