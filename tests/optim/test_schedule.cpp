// Learning-rate schedules and gradient clipping.
#include <numbers>

#include "optim_reference.h"

using namespace tessera;
using namespace tessera::test;

TEST(Schedule, Constant) {
  const optim::Schedule s = optim::constant_lr(0.3);
  EXPECT_EQ(s(0), 0.3);
  EXPECT_EQ(s(1000000), 0.3);
}

TEST(Schedule, StepDecaysEveryStepSize) {
  const optim::Schedule s = optim::step_lr(0.1, 3, 0.5);
  for (int64_t t : {0, 1, 2}) EXPECT_DOUBLE_EQ(s(t), 0.1) << t;
  for (int64_t t : {3, 4, 5}) EXPECT_DOUBLE_EQ(s(t), 0.05) << t;
  EXPECT_DOUBLE_EQ(s(6), 0.025);
  EXPECT_DOUBLE_EQ(s(30), 0.1 * std::pow(0.5, 10));
  EXPECT_DOUBLE_EQ(optim::step_lr(1.0, 10)(10), 0.1);  // default gamma
  EXPECT_TESSERA_ERROR(optim::step_lr(0.1, 0), "step_lr", "step_size", "0");
}

TEST(Schedule, CosineEndpointsAndMidpoint) {
  const optim::Schedule s = optim::cosine_lr(1.0, 100, 0.1);
  EXPECT_DOUBLE_EQ(s(0), 1.0);
  EXPECT_NEAR(s(50), 0.55, 1e-12);
  EXPECT_NEAR(s(25), 0.1 + 0.45 * (1.0 + std::cos(std::numbers::pi / 4)), 1e-12);
  EXPECT_NEAR(s(99), 0.1 + 0.45 * (1.0 + std::cos(std::numbers::pi * 0.99)), 1e-12);
  EXPECT_DOUBLE_EQ(s(100), 0.1);
  EXPECT_DOUBLE_EQ(s(1000), 0.1);
  for (int64_t t = 1; t <= 100; ++t) EXPECT_LE(s(t), s(t - 1)) << t;  // monotone
  EXPECT_NEAR(optim::cosine_lr(2.0, 10)(5), 1.0, 1e-12);              // default min 0
  EXPECT_TESSERA_ERROR(optim::cosine_lr(1.0, 0), "cosine_lr", "total_steps");
}

TEST(Schedule, LinearWarmupThenInner) {
  const optim::Schedule s = optim::linear_warmup(optim::constant_lr(0.5), 4);
  EXPECT_DOUBLE_EQ(s(0), 0.125);
  EXPECT_DOUBLE_EQ(s(1), 0.25);
  EXPECT_DOUBLE_EQ(s(2), 0.375);
  EXPECT_DOUBLE_EQ(s(3), 0.5);
  EXPECT_DOUBLE_EQ(s(4), 0.5);
  // The inner schedule starts at step 0 once the warm-up is over.
  const optim::Schedule inner = optim::cosine_lr(1.0, 10);
  const optim::Schedule w = optim::linear_warmup(inner, 5);
  EXPECT_DOUBLE_EQ(w(4), inner(0));
  for (int64_t t = 0; t < 12; ++t) EXPECT_DOUBLE_EQ(w(t + 5), inner(t)) << t;
  // No warm-up leaves the schedule alone.
  const optim::Schedule none = optim::linear_warmup(inner, 0);
  for (int64_t t = 0; t < 12; ++t) EXPECT_DOUBLE_EQ(none(t), inner(t)) << t;
  EXPECT_TESSERA_ERROR(optim::linear_warmup(inner, -1), "linear_warmup", "-1");
}

TEST(Schedule, DrivesAnOptimizer) {
  Tensor p = param_from({0.0});
  optim::SGD opt({&p}, {.lr = 1.0});
  const optim::Schedule s = optim::step_lr(1.0, 1, 0.5);
  for (int i = 0; i < 3; ++i) {
    opt.set_lr(s(opt.step_count()));
    opt.step({Tensor::from_vector<double>({1.0}, {1})});
  }
  expect_close(p, {-(1.0 + 0.5 + 0.25)}, 1e-12);
  EXPECT_EQ(opt.lr(), 0.25);
}

namespace {
double global_norm(const std::vector<Tensor>& grads) {
  double s = 0;
  for (const Tensor& g : grads) {
    if (!g.defined()) continue;
    for (double v : g.array().to_f64()) s += v * v;
  }
  return std::sqrt(s);
}
}  // namespace

TEST(ClipGradNorm, ScalesToMaxNormAndReturnsTheOriginalNorm) {
  std::vector<Tensor> grads{Tensor::from_vector<double>({3, 4}, {2}), Tensor(),
                            Tensor::from_vector<double>({12}, {1, 1})};
  const double norm = optim::clip_grad_norm(grads, 1.3);
  EXPECT_DOUBLE_EQ(norm, 13.0);
  EXPECT_NEAR(global_norm(grads), 1.3, 1e-6);
  EXPECT_FALSE(grads[1].defined());
  // Direction is kept: every gradient scaled by the same factor.
  const double scale = grads[0].array().to_f64()[0] / 3.0;
  expect_close(grads[0], {3 * scale, 4 * scale}, 1e-12);
  expect_close(grads[2], {12 * scale}, 1e-12);
}

TEST(ClipGradNorm, LeavesSmallGradientsUnchanged) {
  std::vector<Tensor> grads{Tensor::from_vector<float>({0.3f, -0.4f}, {2})};
  const double norm = optim::clip_grad_norm(grads, 1.0);
  EXPECT_NEAR(norm, 0.5, 1e-7);
  EXPECT_EQ(grads[0].to_vector<float>(), (std::vector<float>{0.3f, -0.4f}));
  // Exactly at the max: unchanged too.
  std::vector<Tensor> at_max{Tensor::from_vector<double>({3, 4}, {2})};
  EXPECT_DOUBLE_EQ(optim::clip_grad_norm(at_max, 5.0), 5.0);
  EXPECT_EQ(at_max[0].to_vector<double>(), (std::vector<double>{3, 4}));
}

TEST(ClipGradNorm, F32GradientsAndErrors) {
  std::vector<Tensor> grads{Tensor::from_vector<float>({30, 40}, {2}), Tensor::from_vector<float>({120}, {1})};
  EXPECT_NEAR(optim::clip_grad_norm(grads, 2.0), 130.0, 1e-9);
  EXPECT_EQ(grads[0].dtype(), DType::f32);
  EXPECT_NEAR(global_norm(grads), 2.0, 1e-6);
  std::vector<Tensor> none{Tensor()};
  EXPECT_EQ(optim::clip_grad_norm(none, 1.0), 0.0);
  EXPECT_TESSERA_ERROR(optim::clip_grad_norm(grads, 0.0), "clip_grad_norm", "max_norm");
  EXPECT_TESSERA_ERROR(optim::clip_grad_norm(grads, -1.0), "clip_grad_norm", "-1");
}

TEST(ClipGradNorm, ClipsParameterGradientsInPlace) {
  Tensor a = param_from({1.0, 2.0}), b = param_from({2.0}), unused = param_from({5.0});
  (ops::sum(a * 3.0) + ops::sum(b * 4.0)).backward();  // grads (3, 3) and (4): norm sqrt(34)
  const double norm = optim::clip_grad_norm(std::vector<Tensor*>{&a, &b, &unused}, 0.5);
  EXPECT_NEAR(norm, std::sqrt(34.0), 1e-12);
  EXPECT_NEAR(global_norm({a.grad(), b.grad()}), 0.5, 1e-6);
  EXPECT_FALSE(unused.grad().defined());
  // The optimiser then steps with the clipped gradients.
  optim::SGD opt({&a, &b, &unused}, {.lr = 1.0});
  const double s = 0.5 / std::sqrt(34.0);
  opt.step();
  expect_close(a, {1.0 - 3 * s, 2.0 - 3 * s}, 1e-6);
  expect_close(b, {2.0 - 4 * s}, 1e-6);
  expect_close(unused, {5.0});
}
