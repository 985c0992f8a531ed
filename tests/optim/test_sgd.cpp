// SGD against PyTorch's documented update, written out independently in optim_reference.h.
#include "optim_reference.h"

using namespace tessera;
using namespace tessera::test;

TEST(SGD, PlainStepIsLrTimesGradient) {
  Tensor p = param_from(kStart);
  optim::SGD opt({&p}, {.lr = 0.1});
  // One step by hand: p - 0.1 * (2p + 0.4 - 0.25 i).
  const Vec one = run_steps(opt, p, 1);
  expect_vec_near(one, {1.0 - 0.1 * 2.4, -2.0 - 0.1 * (-3.6 - 0.25), 0.5 - 0.1 * (1.4 - 0.5)}, 1e-12);
  const Vec three = run_steps(opt, p, 2, 2);
  expect_vec_near(three, SgdRef{.lr = 0.1}.run(kStart, 3), 1e-12);
  EXPECT_EQ(opt.step_count(), 3);
  EXPECT_EQ(opt.name(), "sgd");
}

TEST(SGD, Momentum) {
  Tensor p = param_from(kStart);
  optim::SGD opt({&p}, {.lr = 0.05, .momentum = 0.9});
  expect_vec_near(run_steps(opt, p, 3), SgdRef{.lr = 0.05, .momentum = 0.9}.run(kStart, 3), 1e-12);
}

TEST(SGD, MomentumWithDampening) {
  Tensor p = param_from(kStart);
  optim::SGD opt({&p}, {.lr = 0.05, .momentum = 0.8, .dampening = 0.3});
  expect_vec_near(run_steps(opt, p, 3), SgdRef{.lr = 0.05, .momentum = 0.8, .dampening = 0.3}.run(kStart, 3), 1e-12);
}

TEST(SGD, Nesterov) {
  Tensor p = param_from(kStart);
  optim::SGD opt({&p}, {.lr = 0.05, .momentum = 0.9, .nesterov = true});
  const Vec got = run_steps(opt, p, 3);
  expect_vec_near(got, SgdRef{.lr = 0.05, .momentum = 0.9, .nesterov = true}.run(kStart, 3), 1e-12);
  // Nesterov differs from classical momentum after the first step.
  const Vec classical = SgdRef{.lr = 0.05, .momentum = 0.9}.run(kStart, 3);
  EXPECT_GT(std::abs(got[0] - classical[0]), 1e-3);
}

TEST(SGD, WeightDecayAddsL2ToTheGradient) {
  Tensor p = param_from(kStart);
  optim::SGD opt({&p}, {.lr = 0.1, .momentum = 0.5, .weight_decay = 0.2});
  expect_vec_near(run_steps(opt, p, 3), SgdRef{.lr = 0.1, .momentum = 0.5, .weight_decay = 0.2}.run(kStart, 3), 1e-12);
}

TEST(SGD, StepUsesGradientsFromBackward) {
  Tensor p = param_from({1.0, -1.0});
  optim::SGD opt({&p}, {.lr = 0.25});
  ops::sum(p * p * 3.0).backward();  // gradient 6p
  opt.step();
  expect_close(p, {1.0 - 0.25 * 6.0, -1.0 + 0.25 * 6.0}, 1e-12);
  // The parameter is the same leaf, updated in place; its gradient stays until zero_grad, as in PyTorch.
  EXPECT_TRUE(p.value().node()->is_leaf());
  EXPECT_TRUE(p.requires_grad());
  EXPECT_TRUE(p.grad().defined());
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  ops::sum(p).backward();
  opt.step();
  expect_close(p, {-0.5 - 0.25, 0.5 - 0.25}, 1e-12);
}

TEST(SGD, ParametersWithoutGradientsAreSkipped) {
  Tensor a = param_from({1.0}), b = param_from({2.0});
  optim::SGD opt({&a, &b}, {.lr = 0.5, .momentum = 0.9});
  ops::sum(a * 4.0).backward();
  opt.step();
  expect_close(a, {-1.0});
  expect_close(b, {2.0});
  // Only the parameter that moved has momentum state.
  const auto state = opt.state_dict();
  EXPECT_EQ(state.count("0.momentum_buffer"), 1u);
  EXPECT_EQ(state.count("1.momentum_buffer"), 0u);
}

TEST(SGD, F32ParametersStayF32) {
  Tensor p = param_from({1.0, 2.0}, DType::f32);
  optim::SGD opt({&p}, {.lr = 0.5});
  opt.step({Tensor::from_vector<double>({1.0, 1.0}, {2})});  // an f64 gradient is cast
  EXPECT_EQ(p.dtype(), DType::f32);
  expect_close(p, {0.5, 1.5});
}

TEST(SGD, OptionErrors) {
  Tensor p = param_from(kStart);
  EXPECT_TESSERA_ERROR(optim::SGD({&p}, {.lr = -1.0}), "learning rate", "-1");
  EXPECT_TESSERA_ERROR(optim::SGD({&p}, {.lr = NAN}), "learning rate", "nan");
  EXPECT_TESSERA_ERROR(optim::SGD({&p}, {.lr = 0.1, .momentum = -0.5}), "sgd", "momentum", "-0.5");
  EXPECT_TESSERA_ERROR(optim::SGD({&p}, {.lr = 0.1, .weight_decay = -1e-3}), "sgd", "weight_decay");
  EXPECT_TESSERA_ERROR(optim::SGD({&p}, {.lr = 0.1, .nesterov = true}), "sgd", "nesterov", "momentum");
  EXPECT_TESSERA_ERROR(optim::SGD({&p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}), "sgd",
                       "nesterov", "dampening");
}

TEST(SGD, StepErrors) {
  Tensor a = param_from({1.0, 2.0}), b = param_from({3.0});
  optim::SGD opt({&a, &b}, {.lr = 0.1});
  EXPECT_TESSERA_ERROR(opt.step({Tensor::from_vector<double>({1, 1}, {2})}), "sgd", "1 gradients", "2 parameters");
  EXPECT_TESSERA_ERROR(opt.step({Tensor::from_vector<double>({1, 1, 1}, {3}), Tensor()}), "sgd", "'0'", "f64[3]",
                       "f64[2]");
  EXPECT_TESSERA_ERROR(opt.set_lr(-0.5), "learning rate", "-0.5");
}
