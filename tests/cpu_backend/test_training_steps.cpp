// Whole training steps (forward + grad + Adam) on the backend under test against the reference backend.
#include "model_steps.h"
#include "tessera/backends/verify.h"

namespace tessera::test {
namespace {

using backends::cpu::JitMode;

void expect_step_matches(const StepGraph& s, const std::string& what) {
  // Products are summed in a different order than the reference's double accumulation.
  expect_matches_reference(s.graph, s.inputs, what, 2e-4);
}

TEST(TrainingStep, SmallMlpMatchesReference) {
  for (bool fused : {true, false}) {
    const StepGraph s = mlp_train_step(8, {20, 16, 12, 5}, fused);
    for (JitMode mode : {JitMode::off, JitMode::always}) {
      ScopedJit jit(mode);
      expect_step_matches(
          s, std::string(fused ? "fused adam" : "elementwise adam") + (mode == JitMode::off ? ", no jit" : ", jit"));
    }
  }
}

TEST(TrainingStep, FullSizeMlpMatchesReference) {
  ScopedJit jit(JitMode::always);
  expect_step_matches(mlp_train_step(16, {784, 1024, 512, 256, 10}), "mlp 784-1024-512-256-10");
}

TEST(TrainingStep, CnnMatchesReference) {
  const StepGraph s = cnn_train_step(4, false);
  for (JitMode mode : {JitMode::off, JitMode::always}) {
    ScopedJit jit(mode);
    expect_step_matches(s, mode == JitMode::off ? "cnn, no jit" : "cnn, jit");
  }
}

}  // namespace
}  // namespace tessera::test
