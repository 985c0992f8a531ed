// layer_norm, rms_norm, batch_norm, group_norm: values against statistics computed here, running
// statistics after a training step, errors and f64 gradient checks.
#include <limits>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// Normalises each consecutive block of `block` values (biased variance).
std::vector<double> hand_normalize(const std::vector<double>& x, size_t block, double eps) {
  std::vector<double> out(x.size());
  for (size_t start = 0; start < x.size(); start += block) {
    double mu = 0, var = 0;
    for (size_t i = 0; i < block; ++i) mu += x[start + i];
    mu /= static_cast<double>(block);
    for (size_t i = 0; i < block; ++i) var += (x[start + i] - mu) * (x[start + i] - mu);
    var /= static_cast<double>(block);
    for (size_t i = 0; i < block; ++i) out[start + i] = (x[start + i] - mu) / std::sqrt(var + eps);
  }
  return out;
}

std::vector<double> norm_values(const Array& a) {
  return a.to_f64();
}

}  // namespace

TEST(LayerNorm, ValuesWithAndWithoutAffine) {
  const Array xa = random_array({2, 3, 4}, 1, -2, 2);
  const std::vector<double> x = norm_values(xa);
  // normalized_shape [4]: blocks of 4.
  expect_close(ops::layer_norm(Tensor::from_array(xa), {4}), hand_normalize(x, 4, 1e-5), 1e-12);
  // normalized_shape [3, 4] with weight and bias.
  const Array wa = random_array({3, 4}, 2), ba = random_array({3, 4}, 3);
  std::vector<double> want = hand_normalize(x, 12, 1e-3);
  for (size_t i = 0; i < want.size(); ++i) want[i] = want[i] * norm_values(wa)[i % 12] + norm_values(ba)[i % 12];
  Tensor y = ops::layer_norm(Tensor::from_array(xa), {3, 4}, Tensor::from_array(wa), Tensor::from_array(ba), 1e-3);
  expect_shape(y, {2, 3, 4});
  expect_close(y, want, 1e-12);
  // Only a bias.
  std::vector<double> want_b = hand_normalize(x, 4, 1e-5);
  const Array b4 = random_array({4}, 4);
  for (size_t i = 0; i < want_b.size(); ++i) want_b[i] += norm_values(b4)[i % 4];
  expect_close(ops::layer_norm(Tensor::from_array(xa), {4}, Tensor(), Tensor::from_array(b4)), want_b, 1e-12);
}

TEST(LayerNorm, HalfPrecisionAndErrors) {
  const Array xa = random_array({3, 8}, 5, -2, 2);
  Tensor yh = ops::layer_norm(Tensor::from_array(xa.astype(DType::f16)), {8});
  EXPECT_EQ(yh.dtype(), DType::f16);
  expect_close(yh, hand_normalize(norm_values(xa.astype(DType::f16)), 8, 1e-5), 1e-2, 1e-2);

  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::layer_norm(x, {2}), "layer_norm", "f32[2, 3]", "normalized_shape [2]");
  EXPECT_TESSERA_ERROR(ops::layer_norm(x, {1, 2, 3}), "layer_norm", "normalized_shape [1, 2, 3]");
  EXPECT_TESSERA_ERROR(ops::layer_norm(x, {}), "layer_norm", "at least one axis");
  EXPECT_TESSERA_ERROR(ops::layer_norm(x, {3}, ops::ones({2})), "layer_norm", "f32[2, 3]", "f32[2]", "weight");
  EXPECT_TESSERA_ERROR(ops::layer_norm(x, {3}, Tensor(), ops::ones({3, 1})), "layer_norm", "bias");
  EXPECT_TESSERA_ERROR(ops::layer_norm(ops::zeros({2, 3}, DType::i64), {3}), "layer_norm", "i64[2, 3]", "floating");
}

TEST(LayerNorm, Gradients) {
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::layer_norm(xs[0], {3, 4}, xs[1], xs[2], 1e-3);
      },
      (std::vector<Array>{random_array({2, 3, 4}, 11), random_array({3, 4}, 12), random_array({3, 4}, 13)}));
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::layer_norm(xs[0], {5}); },
                         (std::vector<Array>{random_array({4, 5}, 14)}));
  // Second order: the gradient of a layer-norm loss is itself differentiable.
  const Array w = random_array({2, 4}, 15);
  auto first = [w](const std::vector<Tensor>& xs) {
    auto f = [w](const std::vector<Tensor>& ys) {
      return ops::sum(ops::square(ops::layer_norm(ys[0], {4}, ys[1])) * Tensor::from_array(w));
    };
    return grad(f)(xs)[0];
  };
  EXPECT_GRADIENTS_MATCH(first, (std::vector<Array>{random_array({2, 4}, 16), random_array({4}, 17)}));
}

TEST(RmsNorm, ValuesErrorsGradients) {
  const Array xa = random_array({3, 4}, 21, -2, 2), wa = random_array({4}, 22);
  const std::vector<double> x = norm_values(xa), w = norm_values(wa);
  std::vector<double> want(x.size());
  for (size_t r = 0; r < 3; ++r) {
    double ms = 0;
    for (size_t c = 0; c < 4; ++c) ms += x[r * 4 + c] * x[r * 4 + c];
    ms /= 4;
    for (size_t c = 0; c < 4; ++c) want[r * 4 + c] = x[r * 4 + c] / std::sqrt(ms + 1e-6) * w[c];
  }
  expect_close(ops::rms_norm(Tensor::from_array(xa), {4}, Tensor::from_array(wa), 1e-6), want, 1e-12);
  // Over both axes, no weight.
  double ms = 0;
  for (double v : x) ms += v * v;
  ms /= 12;
  std::vector<double> want_all;
  for (double v : x) want_all.push_back(v / std::sqrt(ms + 1e-2));
  expect_close(ops::rms_norm(Tensor::from_array(xa), {3, 4}, Tensor(), 1e-2), want_all, 1e-12);
  EXPECT_TESSERA_ERROR(ops::rms_norm(Tensor::from_array(xa), {3}), "rms_norm", "f64[3, 4]", "normalized_shape [3]");
  EXPECT_TESSERA_ERROR(ops::rms_norm(Tensor::from_array(xa), {4}, ops::ones({3})), "rms_norm", "weight");
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::rms_norm(xs[0], {2, 3}, xs[1]);
      },
      (std::vector<Array>{random_array({2, 2, 3}, 23), random_array({2, 3}, 24)}));
}

// Without an eps, rms_norm adds the machine epsilon of the compute dtype, as PyTorch's F.rms_norm(eps=None):
// f64 2^-52, f32 2^-23, and f32's for f16/bf16 (they compute in f32). Tiny inputs make the eps visible.
TEST(RmsNorm, DefaultEpsIsTheMachineEpsilon) {
  EXPECT_EQ(ops::default_rms_norm_eps(DType::f64), std::numeric_limits<double>::epsilon());
  EXPECT_EQ(ops::default_rms_norm_eps(DType::f32), static_cast<double>(std::numeric_limits<float>::epsilon()));
  EXPECT_EQ(ops::default_rms_norm_eps(DType::f16), static_cast<double>(std::numeric_limits<float>::epsilon()));
  EXPECT_EQ(ops::default_rms_norm_eps(DType::bf16), static_cast<double>(std::numeric_limits<float>::epsilon()));
  const std::vector<double> x = {1e-4, -2e-4, 3e-4, 0.0};
  const double ms = (1e-8 + 4e-8 + 9e-8) / 4;
  for (DType dt : {DType::f64, DType::f32}) {
    const double eps = ops::default_rms_norm_eps(dt);
    std::vector<double> want;
    for (double v : x) want.push_back(v / std::sqrt(ms + eps));
    const Tensor y = ops::rms_norm(ops::cast(Tensor::from_vector<double>(x, {4}), dt), {4});
    expect_close(y, want, dt == DType::f64 ? 1e-12 : 1e-5);
    // The old default, 1e-6, gives visibly different values here: the test pins the new one.
    EXPECT_GT(std::abs(y.array().to_f64()[2] - 3e-4 / std::sqrt(ms + 1e-6)), 0.1);
  }
}

TEST(BatchNorm, TrainingStepValuesAndRunningStats) {
  // x [N=3, C=2, L=2]: channel c holds x[n][c][l] for all n, l (6 values).
  const Array xa = random_array({3, 2, 2}, 31, -2, 3);
  const std::vector<double> x = norm_values(xa);
  const std::vector<double> rm0{0.5, -1.0}, rv0{2.0, 0.5}, w{1.5, -0.5}, b{0.1, 0.2};
  const double momentum = 0.1, eps = 1e-5;
  Tensor rm = Tensor::from_vector<double>(rm0, {2}), rv = Tensor::from_vector<double>(rv0, {2});
  ops::BatchNormResult r = ops::batch_norm(Tensor::from_array(xa), rm, rv, Tensor::from_vector<double>(w, {2}),
                                           Tensor::from_vector<double>(b, {2}), /*training=*/true, momentum, eps);
  std::vector<double> want(12), want_rm(2), want_rv(2);
  for (size_t c = 0; c < 2; ++c) {
    std::vector<size_t> idx;
    for (size_t n = 0; n < 3; ++n)
      for (size_t l = 0; l < 2; ++l) idx.push_back(n * 4 + c * 2 + l);
    double mu = 0, ss = 0;
    for (size_t i : idx) mu += x[i];
    mu /= 6;
    for (size_t i : idx) ss += (x[i] - mu) * (x[i] - mu);
    for (size_t i : idx) want[i] = (x[i] - mu) / std::sqrt(ss / 6 + eps) * w[c] + b[c];
    want_rm[c] = (1 - momentum) * rm0[c] + momentum * mu;
    want_rv[c] = (1 - momentum) * rv0[c] + momentum * ss / 5;  // unbiased for the running update
  }
  expect_close(r.output, want, 1e-12);
  expect_close(r.running_mean, want_rm, 1e-12);
  expect_close(r.running_var, want_rv, 1e-12);

  // Inference with the updated statistics.
  ops::BatchNormResult inf =
      ops::batch_norm(Tensor::from_array(xa), r.running_mean, r.running_var, Tensor(), Tensor(), /*training=*/false);
  std::vector<double> want_inf(12);
  for (size_t i = 0; i < 12; ++i) {
    const size_t c = (i / 2) % 2;
    want_inf[i] = (x[i] - want_rm[c]) / std::sqrt(want_rv[c] + 1e-5);
  }
  expect_close(inf.output, want_inf, 1e-12);
  expect_close(inf.running_mean, want_rm, 1e-12);  // passed through unchanged
  expect_close(inf.running_var, want_rv, 1e-12);
}

TEST(BatchNorm, TrainingWithoutRunningStatsAndRank2) {
  const Array xa = random_array({4, 3}, 32);
  ops::BatchNormResult r = ops::batch_norm(Tensor::from_array(xa), Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_FALSE(r.running_mean.defined());
  EXPECT_FALSE(r.running_var.defined());
  // [N, C]: each column normalised over the 4 rows.
  const std::vector<double> x = norm_values(xa);
  std::vector<double> cols;
  for (size_t c = 0; c < 3; ++c)
    for (size_t n = 0; n < 4; ++n) cols.push_back(x[n * 3 + c]);
  const std::vector<double> norm_cols = hand_normalize(cols, 4, 1e-5);
  std::vector<double> want(12);
  for (size_t c = 0; c < 3; ++c)
    for (size_t n = 0; n < 4; ++n) want[n * 3 + c] = norm_cols[c * 4 + n];
  expect_close(r.output, want, 1e-12);
}

TEST(BatchNorm, Errors) {
  Tensor x = ops::zeros({2, 3, 4});
  Tensor s3 = ops::ones({3});
  EXPECT_TESSERA_ERROR(ops::batch_norm(ops::zeros({3}), s3, s3, Tensor(), Tensor(), true), "batch_norm", "f32[3]",
                       "rank >= 2");
  EXPECT_TESSERA_ERROR(ops::batch_norm(x, ops::ones({4}), s3, Tensor(), Tensor(), true), "batch_norm", "f32[2, 3, 4]",
                       "running_mean", "[3]");
  EXPECT_TESSERA_ERROR(ops::batch_norm(x, s3, s3, ops::ones({2}), Tensor(), true), "batch_norm", "weight");
  EXPECT_TESSERA_ERROR(ops::batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false), "batch_norm",
                       "running statistics");
  EXPECT_TESSERA_ERROR(ops::batch_norm(x, s3, Tensor(), Tensor(), Tensor(), true), "batch_norm", "together");
  EXPECT_TESSERA_ERROR(ops::batch_norm(ops::zeros({1, 3}), s3, s3, Tensor(), Tensor(), true), "batch_norm",
                       "more than one value per channel");
  EXPECT_TESSERA_ERROR(ops::batch_norm(ops::zeros({2, 3}, DType::i32), s3, s3, Tensor(), Tensor(), true), "batch_norm",
                       "i32[2, 3]", "floating");
  // One value per channel is fine in inference.
  EXPECT_NO_THROW(ops::batch_norm(ops::zeros({1, 3}), s3, s3, Tensor(), Tensor(), false).output.eval());
}

TEST(BatchNorm, Gradients) {
  const Array rm = random_array({3}, 41), rv = random_array({3}, 42, 0.5, 2);
  for (bool training : {true, false}) {
    EXPECT_GRADIENTS_MATCH(
        [rm, rv, training](const std::vector<Tensor>& xs) {
          return ops::batch_norm(xs[0], Tensor::from_array(rm), Tensor::from_array(rv), xs[1], xs[2], training, 0.1,
                                 1e-3)
              .output;
        },
        (std::vector<Array>{random_array({4, 3, 2}, 43), random_array({3}, 44), random_array({3}, 45)}));
  }
  // The running statistics as functions of the old ones (linear with factor 1 - momentum); the batch
  // statistics enter them without a gradient, so x is held constant here.
  const Array x = random_array({5, 3}, 46);
  EXPECT_GRADIENTS_MATCH(
      [x](const std::vector<Tensor>& xs) {
        ops::BatchNormResult r = ops::batch_norm(Tensor::from_array(x), xs[0], xs[1], Tensor(), Tensor(), true, 0.3);
        return ops::concat({r.running_mean, r.running_var}, 0);
      },
      (std::vector<Array>{random_array({3}, 47), random_array({3}, 48, 0.5, 1)}));
  auto g = grad([](const std::vector<Tensor>& xs) {
    ops::BatchNormResult r = ops::batch_norm(xs[0], xs[1], xs[2], Tensor(), Tensor(), true, 0.3);
    return ops::sum(r.running_mean) + ops::sum(r.running_var);
  })({Tensor::from_array(x), Tensor::from_array(random_array({3}, 47)), Tensor::from_array(random_array({3}, 48))});
  expect_close(g[0], std::vector<double>(15, 0.0));
  expect_close(g[1], {0.7, 0.7, 0.7}, 1e-15);
}

TEST(GroupNorm, ValuesErrorsGradients) {
  // x [N=2, C=4, L=3], 2 groups: each group is 2 channels x 3 positions = 6 consecutive values.
  const Array xa = random_array({2, 4, 3}, 51, -2, 2);
  const std::vector<double> x = norm_values(xa);
  const std::vector<double> w{1, 2, -1, 0.5}, b{0, 0.1, 0.2, 0.3};
  std::vector<double> want = hand_normalize(x, 6, 1e-5);
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t c = (i / 3) % 4;
    want[i] = want[i] * w[c] + b[c];
  }
  Tensor y = ops::group_norm(Tensor::from_array(xa), 2, Tensor::from_vector<double>(w, {4}),
                             Tensor::from_vector<double>(b, {4}));
  expect_shape(y, {2, 4, 3});
  expect_close(y, want, 1e-12);
  // One group = layer norm over [C, L]; C groups = instance norm.
  expect_close(ops::group_norm(Tensor::from_array(xa), 1), hand_normalize(x, 12, 1e-5), 1e-12);
  expect_close(ops::group_norm(Tensor::from_array(xa), 4), hand_normalize(x, 3, 1e-5), 1e-12);

  Tensor xf = ops::zeros({2, 6, 3});
  EXPECT_TESSERA_ERROR(ops::group_norm(xf, 4), "group_norm", "f32[2, 6, 3]", "6 channels", "4 groups");
  EXPECT_TESSERA_ERROR(ops::group_norm(xf, 0), "group_norm", "0 groups");
  EXPECT_TESSERA_ERROR(ops::group_norm(xf, 3, ops::ones({3})), "group_norm", "weight", "[6]");
  EXPECT_TESSERA_ERROR(ops::group_norm(ops::zeros({6}), 3), "group_norm", "rank >= 2");

  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::group_norm(xs[0], 2, xs[1], xs[2], 1e-3); },
      (std::vector<Array>{random_array({2, 4, 2, 2}, 52), random_array({4}, 53), random_array({4}, 54)}));
}
