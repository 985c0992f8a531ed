// `tessera export stablehlo --checkpoint C`: the bundle carries the checkpoint's weights (and, for a
// training step, its Adam moments and step count) instead of seeded ones; mismatches are clear errors.
#include <cstring>

#include "tessera/io/npy.h"
#include "tessera/io/safetensors.h"
#include "tessera/models/vision.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/checkpoint.h"
#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// An MLP after two Adam steps (so that its moments and step count exist), saved as `tessera train` does.
void write_trained_checkpoint(const std::string& path, bool sgd = false) {
  ops::Generator gen(7);
  auto model = models::mlp(gen);
  std::unique_ptr<optim::Optimizer> opt;
  if (sgd) {
    opt = std::make_unique<optim::SGD>(*model, optim::SGDOptions{.lr = 0.1});
  } else {
    opt = std::make_unique<optim::Adam>(*model, optim::AdamOptions{.lr = 1e-3});
  }
  const Tensor x = Tensor::from_array(random_array({4, 784}, 1, 0, 1, DType::f32));
  const Tensor y = Tensor::from_vector<int64_t>({1, 2, 3, 4}, {4});
  for (int step = 0; step < 2; ++step) {
    opt->zero_grad();
    ops::cross_entropy((*model)(x), y).backward();
    opt->step();
  }
  train::save_checkpoint(path, *model, opt.get(), {{"model", "mlp"}, {"epoch", "1"}});
}

}  // namespace

TEST_F(CliTest, ExportUsesTheCheckpointsWeights) {
  const std::string ckpt = path("ckpt.safetensors").string();
  write_trained_checkpoint(ckpt);
  const io::SafetensorsFile saved = io::load_safetensors_with_metadata(ckpt);

  const CliResult r = run("export stablehlo --checkpoint " + shell_quote(ckpt) + " --batch-size 2 --quiet --out " +
                          shell_quote(path("trained").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult seeded = run("export stablehlo --model mlp --batch-size 2 --quiet --out " +
                               shell_quote(path("seeded").string()));
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  const Array w = io::load_npy(path("trained/mlp.input_0.npy").string());
  EXPECT_TRUE(same_bytes(w, saved.tensors.at("model.1.weight")));
  EXPECT_TRUE(same_bytes(io::load_npy(path("trained/mlp.input_7.npy").string()), saved.tensors.at("model.7.bias")));
  EXPECT_FALSE(same_bytes(w, io::load_npy(path("seeded/mlp.input_0.npy").string())));
  // Tessera's expected outputs are those of the trained weights, so they differ from the seeded ones.
  EXPECT_FALSE(same_bytes(io::load_npy(path("trained/mlp.expected_0.npy").string()),
                          io::load_npy(path("seeded/mlp.expected_0.npy").string())));
  EXPECT_NE(read_file(path("trained/mlp.json")).find("ckpt.safetensors"), std::string::npos);

  // A training step starts from the checkpoint's Adam state: moments and the step count.
  const CliResult step = run("export stablehlo --checkpoint " + shell_quote(ckpt) +
                             " --train-step --batch-size 2 --no-expected --quiet --out " +
                             shell_quote(path("step").string()));
  ASSERT_EQ(step.exit_code, 0) << step.err;
  EXPECT_TRUE(same_bytes(io::load_npy(path("step/mlp_train_step.input_8.npy").string()),
                         saved.tensors.at("optim.1.weight.exp_avg")));
  EXPECT_TRUE(same_bytes(io::load_npy(path("step/mlp_train_step.input_16.npy").string()),
                         saved.tensors.at("optim.1.weight.exp_avg_sq")));
  EXPECT_EQ(io::load_npy(path("step/mlp_train_step.input_24.npy").string()).item(), 2.0);
}

TEST_F(CliTest, ExportRefusesCheckpointsThatDoNotFit) {
  const std::string ckpt = path("ckpt.safetensors").string();
  write_trained_checkpoint(ckpt);
  const CliResult cnn = run("export stablehlo --model cnn --checkpoint " + shell_quote(ckpt) + " --quiet --out " +
                            shell_quote(path("o").string()));
  EXPECT_EQ(cnn.exit_code, 1) << cnn.err;
  EXPECT_TRUE(contains(cnn.err, "--model cnn")) << cnn.err;
  EXPECT_TRUE(contains(cnn.err, "holds a mlp")) << cnn.err;

  const std::string sgd = path("sgd.safetensors").string();
  write_trained_checkpoint(sgd, /*sgd=*/true);
  const CliResult step = run("export stablehlo --train-step --checkpoint " + shell_quote(sgd) + " --quiet --out " +
                             shell_quote(path("o").string()));
  EXPECT_EQ(step.exit_code, 1) << step.err;
  EXPECT_TRUE(contains(step.err, "'sgd'")) << step.err;

  ops::Generator gen(0);
  auto three = models::mlp(gen, 784, 3);
  const std::string small = path("three.safetensors").string();
  train::save_checkpoint(small, *three, nullptr, {{"model", "mlp"}, {"classes", "[\"a\",\"b\",\"c\"]"}});
  const CliResult classes = run("export stablehlo --checkpoint " + shell_quote(small) + " --quiet --out " +
                                shell_quote(path("o").string()));
  EXPECT_EQ(classes.exit_code, 1) << classes.err;
  EXPECT_TRUE(contains(classes.err, "three.safetensors")) << classes.err;
  EXPECT_TRUE(contains(classes.err, "3 classes")) << classes.err;

  const CliResult missing = run("export stablehlo --checkpoint " + shell_quote(path("absent.safetensors").string()) +
                                " --out " + shell_quote(path("o").string()));
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_TRUE(contains(missing.err, "absent.safetensors")) << missing.err;
  const CliResult typo = run("export stablehlo --chekpoint x --out " + shell_quote(path("o").string()));
  EXPECT_EQ(typo.exit_code, 2) << typo.err;
  EXPECT_TRUE(contains(typo.err, "did you mean '--checkpoint'")) << typo.err;
}

TEST_F(CliTest, ExportOnnxUsesTheCheckpointsWeights) {
  const std::string ckpt = path("ckpt.safetensors").string();
  write_trained_checkpoint(ckpt);
  const io::SafetensorsFile saved = io::load_safetensors_with_metadata(ckpt);
  const CliResult trained = run("export onnx --checkpoint " + shell_quote(ckpt) + " --batch-size 2 --quiet --out " +
                                shell_quote(path("trained").string()));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const CliResult seeded =
      run("export onnx --model mlp --batch-size 2 --quiet --out " + shell_quote(path("seeded").string()));
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  // The weights are initializers inside the model, so Tessera's outputs show which ones were used.
  EXPECT_FALSE(same_bytes(io::load_npy(path("trained/mlp.expected_0.npy").string()),
                          io::load_npy(path("seeded/mlp.expected_0.npy").string())));
  EXPECT_NE(read_file(path("trained/mlp.json")).find("ckpt.safetensors"), std::string::npos);
  // A training step takes every parameter, moment and the step count as inputs, in the program's order.
  const CliResult step = run("export onnx --checkpoint " + shell_quote(ckpt) +
                             " --train-step --batch-size 2 --no-expected --quiet --out " + shell_quote(path("step").string()));
  ASSERT_EQ(step.exit_code, 0) << step.err;
  EXPECT_TRUE(same_bytes(io::load_npy(path("step/mlp_train_step.input_0.npy").string()),
                         saved.tensors.at("model.1.weight")));
  EXPECT_TRUE(same_bytes(io::load_npy(path("step/mlp_train_step.input_8.npy").string()),
                         saved.tensors.at("optim.1.weight.exp_avg")));
  EXPECT_EQ(io::load_npy(path("step/mlp_train_step.input_24.npy").string()).item(), 2.0);
  EXPECT_NE(read_file(path("step/mlp_train_step.json")).find("\"new.step\""), std::string::npos);
  // A model that is not the checkpoint's, and a checkpoint with a graph file, are refused.
  const CliResult wrong = run("export onnx --model cnn --checkpoint " + shell_quote(ckpt) + " --out " +
                              shell_quote(path("wrong").string()));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("holds a mlp"), std::string::npos) << wrong.err;
}
