// Training on Vulkan: the MLP and CNN training steps (forward, cross entropy, gradients, Adam) compile
// into one Vulkan executable with no CPU segment, and a few compiled steps of the built-in classifiers
// follow the CPU backend's.
#include <gtest/gtest.h>

#include <cmath>

#include "model_steps.h"
#include "tessera/models/vision.h"
#include "tessera/optim/optim.h"
#include "tessera/train/train_step.h"
#include "vulkan/vulkan_test_util.h"

namespace tessera::test {
namespace {

void expect_whole_on_vulkan(const ir::Graph& g, const char* what) {
  const auto exe = vulkan_under_test().compile(g);
  EXPECT_NE(dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get()), nullptr)
      << what << " was split: part of it runs on the CPU; ops without a Vulkan route:" << vulkan_missing_ops(g);
}

TEST(VulkanTraining, MlpAndCnnStepsCompileWithoutACpuSegment) {
  expect_whole_on_vulkan(mlp_train_step(16, {784, 256, 128, 10}).graph, "the MLP step");
  expect_whole_on_vulkan(cnn_train_step(4).graph, "the CNN step");
}

// Losses of `steps` compiled steps of a classifier on one backend, from the same initial weights.
std::vector<double> classifier_losses(const std::string& name, backends::Backend& backend, int steps) {
  ops::Generator gen(3);
  std::shared_ptr<nn::Module> model = models::make_classifier(name, gen);
  optim::Adam opt(*model, {});
  train::CompiledTrainStep step(
      *model, opt, [](nn::Module& m, const Tensor& x, const Tensor& y) { return ops::cross_entropy(m(x), y); }, 0.0,
      &backend);
  const Array x = random_array({8, 1, 28, 28}, 4, 0, 1, DType::f32);
  std::vector<int64_t> labels(8);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 3) % 10);
  const Array y = Array::from_vector<int64_t>(labels, {8});
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(step.step(x, y));  // the first one eager, then compiled
  if (&backend == &vulkan_under_test()) {
    EXPECT_NE(dynamic_cast<const backends::vulkan::VulkanExecutable*>(step.last_executable()), nullptr)
        << name << ": the compiled training step was split between Vulkan and the CPU";
  }
  return losses;
}

TEST(VulkanTraining, ClassifierStepsFollowTheCpu) {
  for (const char* name : {"mlp", "cnn"}) {
    SCOPED_TRACE(name);
    const std::vector<double> on_vulkan = classifier_losses(name, vulkan_under_test(), 4);
    const std::vector<double> on_cpu = classifier_losses(name, backends::backend_by_name("cpu"), 4);
    ASSERT_EQ(on_vulkan.size(), on_cpu.size());
    for (size_t i = 0; i < on_cpu.size(); ++i) {
      EXPECT_TRUE(std::isfinite(on_vulkan[i])) << "step " << i;
      EXPECT_NEAR(on_vulkan[i], on_cpu[i], 1e-3 * (1 + std::abs(on_cpu[i]))) << "step " << i;
    }
  }
}

}  // namespace
}  // namespace tessera::test
