// The compiled training step must follow the eager path step for step: same loss, parameters and
// optimiser state, for every optimiser, with and without gradient clipping.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "tessera/models/vision.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/train_step.h"
#include "test_util.h"

namespace tessera::test {
namespace {

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(nn::Module&)>;

Tensor loss_of(nn::Module& m, const Tensor& x, const Tensor& y) { return ops::cross_entropy(m(x), y); }

struct Batch {
  Array x, y;
};

Batch batch(uint64_t seed, int64_t n) {
  Array y = Array::empty(DType::i64, {n});
  for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = static_cast<int64_t>((seed * 7 + static_cast<uint64_t>(i) * 3) % 10);
  return {random_array({n, 20}, seed, 0.0, 1.0), y};
}

// Trains two identical models, one eagerly and one compiled, and compares them after `steps` steps
// (the last batch smaller, as a final partial batch would be).
void expect_compiled_matches_eager(const MakeOptimizer& make, double clip_norm, int steps = 5) {
  ops::Generator g1(3), g2(3);
  auto eager_model = models::mlp(g1, 20, 10);
  auto compiled_model = models::mlp(g2, 20, 10);
  auto eager_opt = make(*eager_model);
  auto compiled_opt = make(*compiled_model);
  train::CompiledTrainStep step(*compiled_model, *compiled_opt, loss_of, clip_norm, &backends::reference_backend());
  for (int s = 0; s < steps; ++s) {
    const Batch b = batch(static_cast<uint64_t>(s), s + 1 == steps ? 5 : 8);
    const double lr = 1e-2 / (1 + s);
    eager_opt->set_lr(lr);
    compiled_opt->set_lr(lr);
    const Tensor loss = loss_of(*eager_model, Tensor::from_array(b.x), Tensor::from_array(b.y));
    eager_opt->zero_grad();
    loss.backward();
    if (clip_norm > 0) optim::clip_grad_norm(eager_opt->params(), clip_norm);
    eager_opt->step();
    const double compiled_loss = step.step(b.x, b.y);
    EXPECT_NEAR(compiled_loss, loss.item(), 1e-5) << "step " << s;
  }
  EXPECT_EQ(step.compiled_graphs(), 2u);  // full batches and the smaller last one
  EXPECT_EQ(compiled_opt->step_count(), steps);
  step.sync();
  auto eager_params = eager_model->named_parameters();
  auto compiled_params = compiled_model->named_parameters();
  ASSERT_EQ(eager_params.size(), compiled_params.size());
  for (size_t i = 0; i < eager_params.size(); ++i) {
    SCOPED_TRACE(eager_params[i].first);
    expect_close(*compiled_params[i].second, eager_params[i].second->array().to_f64(), 1e-5, 1e-6);
  }
  const auto eager_state = eager_opt->state_dict();
  const auto compiled_state = compiled_opt->state_dict();
  ASSERT_EQ(eager_state.size(), compiled_state.size());
  for (const auto& [name, value] : eager_state) {
    SCOPED_TRACE(name);
    expect_close(Tensor::from_array(compiled_state.at(name)), value.to_f64(), 1e-5, 1e-6);
  }
}

TEST(CompiledTrainStep, AdamMatchesEager) {
  expect_compiled_matches_eager([](nn::Module& m) { return std::make_unique<optim::Adam>(m, optim::AdamOptions{}); }, 0);
}

TEST(CompiledTrainStep, AdamWWithClippingMatchesEager) {
  expect_compiled_matches_eager(
      [](nn::Module& m) { return std::make_unique<optim::AdamW>(m, optim::AdamWOptions{.weight_decay = 0.1}); }, 0.5);
}

TEST(CompiledTrainStep, RAdamMatchesEagerAcrossTheRectificationThreshold) {
  // rho_t passes 5 at step 6 with beta2 = 0.999, so 8 steps cover both branches.
  expect_compiled_matches_eager([](nn::Module& m) { return std::make_unique<optim::RAdam>(m, optim::AdamOptions{}); },
                                0, 8);
}

TEST(CompiledTrainStep, SgdNesterovMatchesEager) {
  expect_compiled_matches_eager(
      [](nn::Module& m) {
        return std::make_unique<optim::SGD>(m, optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true});
      },
      0);
}

TEST(CompiledTrainStep, RejectsAnOptimiserOverOtherParameters) {
  ops::Generator g(1);
  auto model = models::mlp(g, 20, 10);
  auto other = models::mlp(g, 20, 10);
  optim::Adam opt(*other, {});
  EXPECT_TESSERA_ERROR(train::CompiledTrainStep(*model, opt, loss_of), "CompiledTrainStep", "parameter 0");
}

TEST(CompiledTrainStep, RejectsRandomOpsInTheStep) {
  ops::Generator g(1);
  auto model = models::mlp(g, 20, 10);
  optim::SGD opt(*model, {.lr = 0.1});
  train::CompiledTrainStep step(*model, opt, [](nn::Module& m, const Tensor& x, const Tensor& y) {
    return ops::cross_entropy(m(ops::dropout(x, 0.5)), y);
  });
  const Batch b = batch(1, 4);
  EXPECT_TESSERA_ERROR(step.step(b.x, b.y), "random op");
}

}  // namespace
}  // namespace tessera::test
