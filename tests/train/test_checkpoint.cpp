// Training checkpoints: model + optimiser round trips that resume exactly, the file layout, and the
// errors for files that are not checkpoints or do not fit the model.
#include <cstring>
#include <fstream>

#include "tessera/io/safetensors.h"
#include "tessera/train/checkpoint.h"
#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

std::shared_ptr<nn::Sequential> tiny_model(uint64_t seed, int64_t hidden = 4) {
  ops::Generator gen(seed);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(3, hidden, true, gen), std::make_shared<nn::BatchNorm1d>(hidden),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(hidden, 2, true, gen)});
}

void train_steps(nn::Module& model, optim::Optimizer& opt, int steps, uint64_t data_seed) {
  for (int s = 0; s < steps; ++s) {
    const Tensor x = Tensor::from_array(random_array({8, 3}, data_seed + static_cast<uint64_t>(s), -1, 1, DType::f32));
    const Tensor loss = ops::sum(ops::square(model(x)));
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

void expect_same_state(const StateDict& a, const StateDict& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, arr] : a) {
    ASSERT_EQ(b.count(name), 1u) << what << ": " << name;
    EXPECT_TRUE(same_bytes(arr, b.at(name))) << what << ": " << name << " differs";
  }
}

std::string read_bytes(const std::string& path) {
  return read_file(path);
}

}  // namespace

TEST(Checkpoint, RoundTripRestoresModelAndOptimizer) {
  TempDir dir;
  auto model = tiny_model(1);
  optim::Adam opt(*model, {.lr = 0.01});
  train_steps(*model, opt, 3, 100);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *model, &opt, {{"epoch", "3"}, {"model", "tiny"}});

  auto restored = tiny_model(2);  // different initial weights
  optim::Adam restored_opt(*restored, {.lr = 0.01});
  const train::CheckpointInfo info = train::load_checkpoint(path, *restored, &restored_opt);
  EXPECT_EQ(info.epoch, 3);
  EXPECT_EQ(info.metadata.at("model"), "tiny");
  EXPECT_EQ(info.metadata.at("format"), "tessera-checkpoint-1");
  EXPECT_EQ(info.metadata.at("optim.optimizer"), "adam");
  EXPECT_EQ(info.metadata.at("optim.step"), "3");
  EXPECT_EQ(restored_opt.step_count(), 3);
  expect_same_state(model->state_dict(), restored->state_dict(), "model after load");
  expect_same_state(opt.state_dict(), restored_opt.state_dict(), "optimizer after load");

  // Both continue identically.
  train_steps(*model, opt, 2, 200);
  train_steps(*restored, restored_opt, 2, 200);
  expect_same_state(model->state_dict(), restored->state_dict(), "model after 2 more steps");
  expect_same_state(opt.state_dict(), restored_opt.state_dict(), "optimizer after 2 more steps");
}

TEST(Checkpoint, FileLayoutIsPlainSafetensors) {
  TempDir dir;
  auto model = tiny_model(3);
  optim::SGD opt(*model, {.lr = 0.1, .momentum = 0.9});
  train_steps(*model, opt, 1, 300);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *model, &opt, {{"epoch", "1"}});
  const io::SafetensorsFile file = io::load_safetensors_with_metadata(path);
  for (const char* name :
       {"model.0.weight", "model.0.bias", "model.1.weight", "model.1.running_mean", "model.1.running_var",
        "model.3.weight", "optim.0.weight.momentum_buffer", "optim.3.bias.momentum_buffer"}) {
    EXPECT_EQ(file.tensors.count(name), 1u) << name;
  }
  EXPECT_EQ(file.tensors.size(), 8u + 6u);  // 6 parameters + 2 buffers; one momentum buffer per parameter
  EXPECT_TRUE(same_bytes(file.tensors.at("model.0.weight"), model->state_dict().at("0.weight")));
  EXPECT_EQ(file.metadata.at("optim.optimizer"), "sgd");
  EXPECT_EQ(train::read_checkpoint_metadata(path).at("epoch"), "1");
}

TEST(Checkpoint, ModelOnlyCheckpoint) {
  TempDir dir;
  auto model = tiny_model(4);
  const std::string path = dir / "weights.safetensors";
  train::save_checkpoint(path, *model, nullptr, {});
  auto other = tiny_model(5);
  const train::CheckpointInfo info = train::load_checkpoint(path, *other, nullptr);
  EXPECT_EQ(info.epoch, 0);  // no epoch recorded
  expect_same_state(model->state_dict(), other->state_dict(), "model");
  // Asking for optimiser state that is not there is an error naming the file.
  optim::Adam opt(*other, {});
  EXPECT_TESSERA_ERROR(train::load_checkpoint(path, *other, &opt), path, "adam", "'none'");
}

TEST(Checkpoint, NotATesseraCheckpoint) {
  TempDir dir;
  const std::string path = dir / "plain.safetensors";
  io::save_safetensors(path, {{"weight", Array::zeros(DType::f32, {2})}}, {{"format", "pt"}});
  auto model = tiny_model(6);
  EXPECT_TESSERA_ERROR(train::load_checkpoint(path, *model, nullptr), path, "not a Tessera training checkpoint",
                       "'pt'");
  EXPECT_TESSERA_ERROR(train::read_checkpoint_metadata(path), path, "not a Tessera training checkpoint");
  const std::string bare = dir / "bare.safetensors";
  io::save_safetensors(bare, {{"weight", Array::zeros(DType::f32, {2})}});
  EXPECT_TESSERA_ERROR(train::load_checkpoint(bare, *model, nullptr), bare, "'missing'");
  EXPECT_TESSERA_ERROR(train::load_checkpoint(dir / "absent.safetensors", *model, nullptr), "absent.safetensors");
}

TEST(Checkpoint, MissingAndUnexpectedTensors) {
  TempDir dir;
  auto model = tiny_model(7);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *model, nullptr, {{"epoch", "1"}});
  io::SafetensorsFile file = io::load_safetensors_with_metadata(path);

  StateDict without;
  for (auto& [n, a] : file.tensors) {
    if (n != "model.3.bias") without.emplace(n, a);
  }
  const std::string missing = dir / "missing.safetensors";
  io::save_safetensors(missing, without, file.metadata);
  EXPECT_TESSERA_ERROR(train::load_checkpoint(missing, *model, nullptr), missing, "'3.bias'", "f32[2]", "missing");

  StateDict with_extra = file.tensors;
  with_extra.emplace("model.9.weight", Array::zeros(DType::f32, {1}));
  const std::string extra = dir / "extra.safetensors";
  io::save_safetensors(extra, with_extra, file.metadata);
  EXPECT_TESSERA_ERROR(train::load_checkpoint(extra, *model, nullptr), extra, "'9.weight'");

  StateDict stray = file.tensors;
  stray.emplace("junk", Array::zeros(DType::f32, {1}));
  const std::string junk = dir / "junk.safetensors";
  io::save_safetensors(junk, stray, file.metadata);
  EXPECT_TESSERA_ERROR(train::load_checkpoint(junk, *model, nullptr), junk, "'junk'");
}

TEST(Checkpoint, MisshapedTensorNamesBothShapes) {
  TempDir dir;
  auto small = tiny_model(8, 4);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *small, nullptr, {});
  auto wide = tiny_model(9, 5);
  const auto before = wide->state_dict();
  EXPECT_TESSERA_ERROR(train::load_checkpoint(path, *wide, nullptr), path, "'0.weight'", "[4, 3]", "[5, 3]");
  expect_same_state(before, wide->state_dict(), "model after a failed load");
}

TEST(Checkpoint, MisshapedOptimizerState) {
  TempDir dir;
  auto small = tiny_model(10, 4);
  optim::Adam opt(*small, {});
  train_steps(*small, opt, 1, 400);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *small, &opt, {});
  // Same model shapes, but the optimiser state file has one slot reshaped.
  io::SafetensorsFile file = io::load_safetensors_with_metadata(path);
  StateDict tensors = file.tensors;
  for (auto& [n, a] : tensors) {
    if (n == "optim.0.bias.exp_avg") a = Array::zeros(DType::f32, {2, 2});
  }
  const std::string bad = dir / "bad.safetensors";
  io::save_safetensors(bad, tensors, file.metadata);
  auto other = tiny_model(11, 4);
  optim::Adam other_opt(*other, {});
  EXPECT_TESSERA_ERROR(train::load_checkpoint(bad, *other, &other_opt), bad, "'0.bias.exp_avg'", "[2, 2]", "[4]");
  // And the wrong optimiser kind.
  optim::SGD sgd(*other, {.lr = 0.1});
  EXPECT_TESSERA_ERROR(train::load_checkpoint(path, *other, &sgd), path, "sgd", "'adam'");
}

TEST(Checkpoint, TruncatedOrCorruptFile) {
  TempDir dir;
  auto model = tiny_model(12);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *model, nullptr, {{"epoch", "1"}});
  const std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 100u);
  for (size_t keep : {bytes.size() - 1, bytes.size() / 2, size_t{12}, size_t{3}, size_t{0}}) {
    const std::string cut = dir / ("cut" + std::to_string(keep) + ".safetensors");
    write_file(cut, bytes.substr(0, keep));
    EXPECT_TESSERA_ERROR(train::load_checkpoint(cut, *model, nullptr), cut);
  }
  const std::string garbage = dir / "garbage.safetensors";
  write_file(garbage, "this is not a checkpoint at all, just some text");
  EXPECT_TESSERA_ERROR(train::load_checkpoint(garbage, *model, nullptr), garbage);
}

TEST(Checkpoint, BadEpochMetadata) {
  TempDir dir;
  auto model = tiny_model(13);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *model, nullptr, {{"epoch", "two"}});
  EXPECT_TESSERA_ERROR(train::load_checkpoint(path, *model, nullptr), path, "epoch", "'two'");
  // Strict: the whole text, no sign, at most kMaxEpochs (std::stoll read "1xyz" as 1 and "-1000000" as a
  // number, which then trained a million epochs).
  for (const char* bad : {"-1000000", "1xyz", " 1", "+1", "-0", "", "100001", "99999999999999999999"}) {
    train::save_checkpoint(path, *model, nullptr, {{"epoch", bad}});
    EXPECT_TESSERA_ERROR(train::load_checkpoint(path, *model, nullptr), path, "metadata 'epoch'",
                         "expected an integer in [0, 100000]");
  }
  for (const char* good : {"0", "3", "100000"}) {
    train::save_checkpoint(path, *model, nullptr, {{"epoch", good}});
    EXPECT_EQ(train::load_checkpoint(path, *model, nullptr).epoch, std::stoll(good));
  }
}

TEST(Checkpoint, OverwritesAtomically) {
  TempDir dir;
  auto model = tiny_model(14);
  const std::string path = dir / "ckpt.safetensors";
  train::save_checkpoint(path, *model, nullptr, {{"epoch", "1"}});
  auto other = tiny_model(15);
  train::save_checkpoint(path, *other, nullptr, {{"epoch", "2"}});
  auto loaded = tiny_model(16);
  EXPECT_EQ(train::load_checkpoint(path, *loaded, nullptr).epoch, 2);
  expect_same_state(other->state_dict(), loaded->state_dict(), "second save");
  // Only the checkpoint is left in the folder (no temporary files).
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}
