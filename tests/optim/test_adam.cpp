// Adam, AdamW and RAdam against PyTorch's documented algorithms (optim_reference.h). A large eps
// makes its placement (inside or outside the bias correction) visible.
#include "optim_reference.h"

using namespace tessera;
using namespace tessera::test;

TEST(Adam, FirstStepMovesEachParameterByLr) {
  // With bias correction the first step is lr * g / (|g| + eps) ~ lr * sign(g).
  Tensor p = param_from(kStart);
  optim::Adam opt({&p}, {.lr = 0.01, .eps = 1e-12});
  const Vec g = gradient_at(kStart, 1);
  const Vec got = run_steps(opt, p, 1);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], kStart[i] - 0.01 * (g[i] > 0 ? 1 : -1), 1e-10) << i;
  EXPECT_EQ(opt.name(), "adam");
}

TEST(Adam, ThreeStepsWithBiasCorrection) {
  Tensor p = param_from(kStart);
  optim::Adam opt({&p}, {.lr = 0.05, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-2});
  AdamRef ref{.kind = AdamKind::Adam, .lr = 0.05, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-2};
  expect_vec_near(run_steps(opt, p, 3), ref.run(kStart, 3), 1e-12);
}

TEST(Adam, WeightDecayIsAddedToTheGradient) {
  Tensor p = param_from(kStart);
  optim::Adam opt({&p}, {.lr = 0.05, .eps = 1e-3, .weight_decay = 0.5});
  AdamRef ref{.kind = AdamKind::Adam, .lr = 0.05, .eps = 1e-3, .weight_decay = 0.5};
  expect_vec_near(run_steps(opt, p, 3), ref.run(kStart, 3), 1e-12);
}

TEST(AdamW, DecoupledWeightDecay) {
  Tensor p = param_from(kStart);
  optim::AdamW opt({&p}, {.lr = 0.05, .beta1 = 0.85, .eps = 1e-3, .weight_decay = 0.5});
  AdamRef ref{.kind = AdamKind::AdamW, .lr = 0.05, .beta1 = 0.85, .eps = 1e-3, .weight_decay = 0.5};
  const Vec got = run_steps(opt, p, 3);
  expect_vec_near(got, ref.run(kStart, 3), 1e-12);
  // Decoupled decay is not the same as L2 in the gradient.
  AdamRef l2{.kind = AdamKind::Adam, .lr = 0.05, .beta1 = 0.85, .eps = 1e-3, .weight_decay = 0.5};
  EXPECT_GT(std::abs(got[1] - l2.run(kStart, 3)[1]), 1e-4);
  EXPECT_EQ(opt.name(), "adamw");
}

TEST(AdamW, WithoutDecayEqualsAdam) {
  Tensor a = param_from(kStart), b = param_from(kStart);
  optim::Adam adam({&a}, {.lr = 0.02});
  optim::AdamW adamw({&b}, {.lr = 0.02, .weight_decay = 0.0});
  EXPECT_EQ(run_steps(adam, a, 3), run_steps(adamw, b, 3));
}

TEST(AdamW, DefaultWeightDecayIsPyTorchs) {
  // torch.optim.AdamW(weight_decay=0.01) unless told otherwise; Adam's stays 0.
  EXPECT_EQ(optim::AdamWOptions{}.weight_decay, 0.01);
  EXPECT_EQ(optim::AdamOptions{}.weight_decay, 0.0);
  Tensor p = param_from(kStart);
  optim::AdamW opt({&p}, {.lr = 0.05, .beta1 = 0.85, .eps = 1e-3});
  AdamRef ref{.kind = AdamKind::AdamW, .lr = 0.05, .beta1 = 0.85, .eps = 1e-3, .weight_decay = 0.01};
  expect_vec_near(run_steps(opt, p, 3), ref.run(kStart, 3), 1e-12);
}

TEST(RAdam, BothBranchesOfTheRectification) {
  // With beta2 = 0.999, rho_t <= 5 for t <= 5 (plain momentum steps) and > 5 from t = 6 on.
  Tensor p = param_from(kStart);
  optim::RAdam opt({&p}, {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-3});
  AdamRef ref{.kind = AdamKind::RAdam, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-3};
  // Check after the un-rectified phase, then after rectified steps.
  AdamRef early = ref;
  expect_vec_near(run_steps(opt, p, 5), early.run(kStart, 5), 1e-12, "after 5 steps");
  EXPECT_EQ(early.unrectified_steps, 5);
  EXPECT_EQ(early.rectified_steps, 0);
  expect_vec_near(run_steps(opt, p, 4, 6), ref.run(kStart, 9), 1e-12, "after 9 steps");
  EXPECT_EQ(ref.unrectified_steps, 5);
  EXPECT_EQ(ref.rectified_steps, 4);
  EXPECT_EQ(opt.name(), "radam");
}

TEST(RAdam, WeightDecayAndFastVarianceWarmup) {
  // beta2 = 0.9: rho_inf = 19, rectified from step 7 on.
  Tensor p = param_from(kStart);
  optim::RAdam opt({&p}, {.lr = 0.02, .beta1 = 0.5, .beta2 = 0.9, .eps = 0.05, .weight_decay = 0.1});
  AdamRef ref{.kind = AdamKind::RAdam, .lr = 0.02, .beta1 = 0.5, .beta2 = 0.9, .eps = 0.05, .weight_decay = 0.1};
  expect_vec_near(run_steps(opt, p, 10), ref.run(kStart, 10), 1e-12);
  EXPECT_GT(ref.rectified_steps, 0);
  EXPECT_GT(ref.unrectified_steps, 0);
}

TEST(Adam, OptionErrorsNameTheOptimizer) {
  Tensor p = param_from(kStart);
  EXPECT_TESSERA_ERROR(optim::Adam({&p}, {.lr = -0.1}), "learning rate", "-0.1");
  EXPECT_TESSERA_ERROR(optim::Adam({&p}, {.beta1 = 1.0}), "adam", "betas", "(1, 0.999)");
  EXPECT_TESSERA_ERROR(optim::Adam({&p}, {.beta2 = -0.1}), "adam", "betas", "-0.1");
  EXPECT_TESSERA_ERROR(optim::AdamW({&p}, {.beta2 = 1.5}), "adamw", "betas", "1.5");
  EXPECT_TESSERA_ERROR(optim::RAdam({&p}, {.beta1 = -1}), "radam", "betas");
  EXPECT_TESSERA_ERROR(optim::Adam({&p}, {.eps = -1e-8}), "adam", "eps");
  EXPECT_TESSERA_ERROR(optim::AdamW({&p}, {.weight_decay = -0.01}), "adamw", "weight_decay", "-0.01");
}

TEST(Adam, WorksThroughAModuleAndMaterialisesBuffers) {
  ops::Generator gen(3);
  nn::Sequential model({std::make_shared<nn::Linear>(3, 4, true, gen), std::make_shared<nn::BatchNorm1d>(4)});
  optim::Adam opt(model, {.lr = 0.01});
  ASSERT_EQ(opt.params().size(), 4u);
  const Tensor x = Tensor::from_array(random_array({6, 3}, 5, -1, 1, DType::f32));
  ops::sum(ops::square(model(x))).backward();
  opt.step();
  // The batch-norm statistics updated by the forward are evaluated leaves after the step.
  for (const auto& [n, b] : model.named_buffers()) EXPECT_TRUE(b->value().node()->is_leaf()) << n;
  const auto& bn = static_cast<nn::BatchNorm&>(model[1]);
  EXPECT_NE(bn.running_mean.array().to_f64(), std::vector<double>(4, 0.0));
  // Names in the optimiser state follow the module's parameter names.
  const auto state = opt.state_dict();
  for (const char* key : {"0.weight.exp_avg", "0.weight.exp_avg_sq", "1.bias.exp_avg", "1.bias.exp_avg_sq"}) {
    EXPECT_EQ(state.count(key), 1u) << key;
  }
}
