// How the CPU backend lowers whole training steps: library calls, fused Adam, no fallbacks.
#include "model_steps.h"

namespace tessera::test {
namespace {

using backends::cpu::JitMode;

// The training step's heavy ops are library calls; with generated kernels nothing falls back, and
// every parameter's Adam update runs in one fused pass.
TEST(CpuTrainingStep, MlpStepIsFullyCovered) {
  ScopedJit jit(JitMode::always);
  const StepGraph s = mlp_train_step(8, {20, 16, 12, 5});
  auto exe = backends::cpu_backend().compile(s.graph);
  EXPECT_NE(backends::cpu::compile_info(*exe).program.find("adam x6 tensors"), std::string::npos)
      << backends::cpu::compile_info(*exe).program;
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  std::string fallbacks;
  for (const std::string& op : info.fallback_ops) fallbacks += op + " ";
  EXPECT_EQ(fallbacks, "") << info.program;
  EXPECT_TRUE(info.jit_used);
  EXPECT_NE(info.program.find("sgemm"), std::string::npos) << info.program;
  // The backward pass reads each pre-activation, so only the bias add joins the forward GEMMs.
  EXPECT_NE(info.program.find("+bias"), std::string::npos) << info.program;
}

TEST(CpuTrainingStep, CnnConvolutionsArePlannedLibraryCalls) {
  ScopedJit jit(JitMode::always);
  auto exe = backends::cpu_backend().compile(cnn_train_step(2).graph);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  for (const char* step :
       {"conv2d ", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d ", "max_pool2d_backward"}) {
    EXPECT_NE(info.program.find(step), std::string::npos) << step << "\n" << info.program;
  }
}

}  // namespace
}  // namespace tessera::test
