// `tessera eval --checkpoint C` on Fashion-MNIST: the figures agree with what training measured, the text
// and JSON reports, the confusion-matrix PNG, and clear errors for missing, corrupt and mismatched
// checkpoints.
#include <nlohmann/json.hpp>

#include "tessera/models/vision.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/model_spec.h"
#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST_F(CliTest, EvalAgreesWithTrainingAndDrawsTheConfusionMatrix) {
  REQUIRE_FASHION_MNIST();
  const std::string out = path("run").string(), ckpt = out + "/checkpoint.safetensors";
  const CliResult t = run("train --train-limit 256 --test-limit 100 --json --quiet --out " + shell_quote(out));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const nlohmann::json tj = nlohmann::json::parse(t.out);

  const CliResult j = run("eval --checkpoint " + shell_quote(ckpt) + " --limit 100 --json --quiet");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.err, "");
  const nlohmann::json ej = nlohmann::json::parse(j.out);
  // The same weights on the same 100 test images: the accuracy training reported, and its loss.
  EXPECT_EQ(ej.at("accuracy").get<double>(), tj.at("test_accuracy").get<double>());
  EXPECT_NEAR(ej.at("mean_loss").get<double>(), tj.at("test_loss").get<double>(), 1e-5);
  EXPECT_EQ(ej.at("examples").get<int64_t>(), 100);
  int64_t total = 0, diagonal = 0;
  const auto confusion = ej.at("confusion").get<std::vector<std::vector<int64_t>>>();
  ASSERT_EQ(confusion.size(), 10u);
  for (size_t r = 0; r < 10; ++r) {
    for (size_t c = 0; c < 10; ++c) total += confusion[r][c];
    diagonal += confusion[r][r];
  }
  EXPECT_EQ(total, 100);
  EXPECT_EQ(diagonal, static_cast<int64_t>(std::lround(ej.at("accuracy").get<double>() * 100)));
  EXPECT_EQ(ej.at("per_class").size(), 10u);
  EXPECT_EQ(ej.at("classes")[9].get<std::string>(), "Ankle boot");
  EXPECT_TRUE(std::filesystem::exists(out + "/confusion.png"));  // by default beside the checkpoint

  // Text, a progress line and the PNG where asked.
  const CliResult text = run("eval --checkpoint " + shell_quote(ckpt) + " --limit 100 --confusion-png " +
                             shell_quote(path("cm.png").string()));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* part : {"100 examples: accuracy", "mean loss", "precision", "recall", "f1", "Ankle boot",
                           "confusion matrix"}) {
    EXPECT_TRUE(contains(text.out, part)) << part << " in\n" << text.out;
  }
  EXPECT_TRUE(contains(text.err, "evaluating")) << text.err;
  EXPECT_TRUE(contains(text.err, "eta")) << text.err;
  const std::string png = read_file(path("cm.png"));
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

TEST_F(CliTest, EvalErrorsNameTheCheckpointTheTensorAndWhatWasExpected) {
  // Missing: a usage error naming the file.
  const CliResult missing = run("eval --checkpoint " + shell_quote(path("absent.safetensors").string()));
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_TRUE(contains(missing.err, "absent.safetensors")) << missing.err;
  // Corrupt: cut short.
  write_file(path("broken.safetensors"), std::string("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":", 13));
  const CliResult corrupt = run("eval --quiet --checkpoint " + shell_quote(path("broken.safetensors").string()));
  EXPECT_EQ(corrupt.exit_code, 1) << corrupt.err;
  EXPECT_TRUE(contains(corrupt.err, "broken.safetensors")) << corrupt.err;
  EXPECT_EQ(count_lines(corrupt.err), 1) << corrupt.err;
  // Mismatched: the metadata promises Fashion-MNIST's 10 classes, the tensors hold a 3-class head.
  REQUIRE_FASHION_MNIST();
  ops::Generator gen(0);
  auto three = models::mlp(gen, 784, 3);
  const std::string ckpt = path("three.safetensors").string();
  train::save_checkpoint(ckpt, *three, nullptr, {{"model", "mlp"}, {"epoch", "1"}});
  const CliResult mismatch = run("eval --quiet --limit 10 --checkpoint " + shell_quote(ckpt));
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.err;
  for (const char* part : {"three.safetensors", "7.weight", "[3, 256]", "[10, 256]"}) {
    EXPECT_TRUE(contains(mismatch.err, part)) << part << " in " << mismatch.err;
  }
  // A checkpoint whose model the metadata does not name.
  train::save_checkpoint(ckpt, *three, nullptr, {{"model", "resnet"}});
  const CliResult unknown = run("eval --quiet --checkpoint " + shell_quote(ckpt));
  EXPECT_EQ(unknown.exit_code, 1) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "'resnet'")) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "expected mlp or cnn")) << unknown.err;
}
