// Training on the GPU: a run resumed from a checkpoint ends bit-identical to one that never stopped
// (weights, Adam's moments, losses), and steady-state training steps allocate no device memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tessera/backends/backend.h"
#include "tessera/io/safetensors.h"
#include "tessera/models/vision.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/classifier.h"
#include "tessera/train/train_step.h"
#include "test_util.h"

namespace tessera::test {
namespace {

// $TESSERA_FASHION_MNIST_DIR (the GPU machine has no Debian dataset package), else Debian's location.
std::string fashion_mnist_dir() {
  const char* env = std::getenv("TESSERA_FASHION_MNIST_DIR");
  return env != nullptr ? env : "/usr/share/datasets/fashion-mnist";
}

train::TrainOptions small_run(const std::filesystem::path& out, int64_t epochs) {
  train::TrainOptions o;
  o.data_dir = fashion_mnist_dir();
  o.backend = "cuda";
  o.train_limit = 256;
  o.test_limit = 128;
  o.batch_size = 64;
  o.seed = 5;
  o.epochs = epochs;
  o.out_dir = out.string();
  o.progress = false;
  return o;
}

// Every tensor of two checkpoints bit for bit; a difference reports its largest size.
void expect_identical_checkpoints(const std::filesystem::path& pa, const std::filesystem::path& pb) {
  const io::SafetensorsFile a = io::load_safetensors_with_metadata(pa.string()),
                            b = io::load_safetensors_with_metadata(pb.string());
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  ASSERT_EQ(a.tensors.size(), 24u);  // the MLP's 8 tensors and Adam's 16
  for (const auto& [name, arr] : a.tensors) {
    ASSERT_EQ(b.tensors.count(name), 1u) << name;
    const Array x = arr.contiguous(), y = b.tensors.at(name).contiguous();
    ASSERT_EQ(x.nbytes(), y.nbytes()) << name;
    if (std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) == 0) continue;
    const std::vector<double> u = x.to_f64(), v = y.to_f64();
    double worst = 0, at = 0;
    size_t count = 0;
    for (size_t i = 0; i < u.size(); ++i) {
      count += u[i] != v[i];
      if (std::abs(u[i] - v[i]) > worst) worst = std::abs(u[i] - v[i]), at = u[i];
    }
    ADD_FAILURE() << name << ": " << count << " of " << u.size() << " elements differ, the most by " << worst
                  << " (at a value of " << at << ")";
  }
}

bool have_fashion_mnist() {
  return std::filesystem::exists(std::filesystem::path(fashion_mnist_dir()) / "train-images-idx3-ubyte.gz");
}

TEST(CudaTraining, TwoRunsAreBitIdentical) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not found in " << fashion_mnist_dir() << " (set TESSERA_FASHION_MNIST_DIR)";
  const auto dir = std::filesystem::temp_directory_path() / ("tessera-cuda-repeat-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const train::TrainReport first = train::train_classifier(small_run(dir / "first", 2), nullptr);
  const train::TrainReport second = train::train_classifier(small_run(dir / "second", 2), nullptr);
  expect_identical_checkpoints(dir / "first/checkpoint.safetensors", dir / "second/checkpoint.safetensors");
  EXPECT_EQ(first.epochs.back().train_loss, second.epochs.back().train_loss);
  std::filesystem::remove_all(dir);
}

TEST(CudaTraining, ResumeIsBitIdentical) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not found in " << fashion_mnist_dir() << " (set TESSERA_FASHION_MNIST_DIR)";
  const auto dir = std::filesystem::temp_directory_path() / ("tessera-cuda-resume-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const train::TrainReport straight = train::train_classifier(small_run(dir / "straight", 2), nullptr);
  train::train_classifier(small_run(dir / "split", 1), nullptr);
  train::TrainOptions resume = small_run(dir / "resumed", 2);
  resume.resume = (dir / "split/checkpoint.safetensors").string();
  const train::TrainReport second = train::train_classifier(resume, nullptr);
  expect_identical_checkpoints(dir / "straight/checkpoint.safetensors", dir / "resumed/checkpoint.safetensors");
  EXPECT_EQ(second.epochs.back().train_loss, straight.epochs.back().train_loss);
  EXPECT_EQ(second.test_accuracy, straight.test_accuracy);
  std::filesystem::remove_all(dir);
}

TEST(CudaTraining, SteadyStateStepsAllocateNothing) {
  backends::Backend& cuda = backends::backend_by_name("cuda");
  for (const char* name : {"mlp", "cnn"}) {
    SCOPED_TRACE(name);
    ops::Generator gen(1);
    std::shared_ptr<nn::Module> model = models::make_classifier(name, gen);
    optim::Adam opt(*model, {});
    train::CompiledTrainStep step(
        *model, opt, [](nn::Module& m, const Tensor& x, const Tensor& y) { return ops::cross_entropy(m(x), y); }, 0.0,
        &cuda);
    const Array x = random_array({64, 1, 28, 28}, 2, 0, 1, DType::f32);
    std::vector<int64_t> labels(64);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
    const Array y = Array::from_vector<int64_t>(labels, {64});
    for (int i = 0; i < 4; ++i) step.advance(x, y);  // eager first step, compile, capture
    cuda.device().synchronize();
    const DeviceMemoryStats before = cuda.device().memory_stats();
    for (int i = 0; i < 10; ++i) step.advance(x, y);
    cuda.device().synchronize();
    const DeviceMemoryStats after = cuda.device().memory_stats();
    EXPECT_EQ(after.allocations, before.allocations) << "device allocations during 10 steady-state steps";
    EXPECT_EQ(after.reserved, before.reserved);
    EXPECT_TRUE(std::isfinite(step.last_loss_array().to(host_device()).to_f64()[0]));
  }
}

}  // namespace
}  // namespace tessera::test
