// Optimiser state: state_dict/load_state_dict round trips that continue exactly where they left off,
// and the errors for state that does not fit.
#include <memory>

#include "optim_reference.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Factory = std::function<std::unique_ptr<optim::Optimizer>(Tensor*)>;

struct Named {
  std::string name;
  Factory make;
};

std::vector<Named> all_optimizers() {
  return {
      {"sgd",
       [](Tensor* p) {
         return std::make_unique<optim::SGD>(std::vector<Tensor*>{p}, optim::SGDOptions{.lr = 0.05, .momentum = 0.9});
       }},
      {"adam",
       [](Tensor* p) {
         return std::make_unique<optim::Adam>(std::vector<Tensor*>{p}, optim::AdamOptions{.lr = 0.05});
       }},
      {"adamw",
       [](Tensor* p) {
         return std::make_unique<optim::AdamW>(std::vector<Tensor*>{p},
                                               optim::AdamWOptions{.lr = 0.05, .weight_decay = 0.1});
       }},
      {"radam",
       [](Tensor* p) {
         return std::make_unique<optim::RAdam>(std::vector<Tensor*>{p}, optim::AdamOptions{.lr = 0.05, .beta2 = 0.9});
       }},
  };
}

}  // namespace

TEST(OptimizerState, RoundTripContinuesBitIdentically) {
  for (const Named& o : all_optimizers()) {
    // Uninterrupted: 8 steps. Interrupted: 4 steps, save, restore into a fresh optimiser, 4 more.
    Tensor straight = param_from(kStart);
    auto opt_straight = o.make(&straight);
    const Vec expected = run_steps(*opt_straight, straight, 8);

    Tensor first = param_from(kStart);
    auto opt_first = o.make(&first);
    run_steps(*opt_first, first, 4);
    const auto state = opt_first->state_dict();
    const auto meta = opt_first->state_metadata();
    EXPECT_EQ(meta.at("optimizer"), o.name);
    EXPECT_EQ(meta.at("step"), "4");

    Tensor resumed = Tensor::from_array(first.array().copy());
    resumed.set_requires_grad(true);
    auto opt_resumed = o.make(&resumed);
    opt_resumed->load_state_dict(state, meta);
    EXPECT_EQ(opt_resumed->step_count(), 4) << o.name;
    const Vec got = run_steps(*opt_resumed, resumed, 4, 5);
    EXPECT_EQ(got, expected) << o.name;  // exactly, not approximately
    // Without the restored state the continuation differs.
    Tensor fresh = Tensor::from_array(first.array().copy());
    fresh.set_requires_grad(true);
    auto opt_fresh = o.make(&fresh);
    EXPECT_NE(run_steps(*opt_fresh, fresh, 4, 5), expected) << o.name;
  }
}

TEST(OptimizerState, SlotNames) {
  Tensor p = param_from(kStart);
  optim::Adam adam({&p}, {});
  EXPECT_TRUE(adam.state_dict().empty());
  run_steps(adam, p, 1);
  const auto state = adam.state_dict();
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state.begin()->first, "0.exp_avg");
  EXPECT_EQ(std::next(state.begin())->first, "0.exp_avg_sq");
  // m after one step is (1 - beta1) g.
  const Vec g = gradient_at(kStart, 1);
  const Vec m = state.at("0.exp_avg").to_f64();
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(m[i], 0.1 * g[i], 1e-12);

  Tensor q = param_from(kStart);
  optim::SGD plain({&q}, {.lr = 0.1});
  run_steps(plain, q, 2);
  EXPECT_TRUE(plain.state_dict().empty());  // no momentum, no state
  EXPECT_EQ(plain.state_metadata().at("step"), "2");
}

TEST(OptimizerState, LoadErrors) {
  Tensor p = param_from(kStart);
  optim::Adam adam({&p}, {});
  run_steps(adam, p, 2);
  const auto state = adam.state_dict();
  const auto meta = adam.state_metadata();

  Tensor q = param_from(kStart);
  optim::SGD sgd({&q}, {.lr = 0.1, .momentum = 0.9});
  EXPECT_TESSERA_ERROR(sgd.load_state_dict(state, meta), "sgd", "'adam'");

  optim::Adam other({&q}, {});
  auto no_step = meta;
  no_step.erase("step");
  EXPECT_TESSERA_ERROR(other.load_state_dict(state, no_step), "adam", "step");
  auto bad_step = meta;
  bad_step["step"] = "two";
  EXPECT_TESSERA_ERROR(other.load_state_dict(state, bad_step), "adam", "step", "'two'");
  // Strict: whole text, no sign, exact as f64 (the update reads the step as a double).
  for (const char* bad : {"4xyz", " 4", "+4", "-4", "-0", "", "9007199254740993"}) {
    bad_step["step"] = bad;
    EXPECT_TESSERA_ERROR(other.load_state_dict(state, bad_step), "adam", "step count", "expected an integer in [0, ");
  }
  auto no_name = meta;
  no_name.erase("optimizer");
  EXPECT_TESSERA_ERROR(other.load_state_dict(state, no_name), "adam", "'none'");

  auto missing = state;
  missing.erase("0.exp_avg_sq");
  EXPECT_TESSERA_ERROR(other.load_state_dict(missing, meta), "adam", "'0.exp_avg_sq'");

  auto misshaped = state;
  misshaped["0.exp_avg"] = Array::zeros(DType::f64, {4});
  EXPECT_TESSERA_ERROR(other.load_state_dict(misshaped, meta), "adam", "'0.exp_avg'", "[4]", "[3]");

  // A failed load leaves the optimiser as it was.
  EXPECT_EQ(other.step_count(), 0);
  EXPECT_TRUE(other.state_dict().empty());

  // State saved before any step needs no slots.
  optim::Adam unstarted({&q}, {});
  other.load_state_dict(unstarted.state_dict(), unstarted.state_metadata());
  EXPECT_EQ(other.step_count(), 0);
}

TEST(OptimizerState, ModuleOptimizerUsesParameterNames) {
  ops::Generator g1(1), g2(1);
  nn::Linear a(2, 3, true, g1), b(2, 3, true, g2);
  optim::SGD opt_a(a, {.lr = 0.1, .momentum = 0.9});
  const Tensor x = Tensor::from_array(random_array({4, 2}, 2, -1, 1, DType::f32));
  ops::sum(a(x)).backward();
  opt_a.step();
  const auto state = opt_a.state_dict();
  EXPECT_EQ(state.count("weight.momentum_buffer"), 1u);
  EXPECT_EQ(state.count("bias.momentum_buffer"), 1u);
  optim::SGD opt_b(b, {.lr = 0.1, .momentum = 0.9});
  opt_b.load_state_dict(state, opt_a.state_metadata());
  EXPECT_EQ(opt_b.state_dict().at("weight.momentum_buffer").to_f64(), state.at("weight.momentum_buffer").to_f64());
}
