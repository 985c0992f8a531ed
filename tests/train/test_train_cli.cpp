// `tessera train` end to end: the JSON report, the files in --out, and the exit codes and messages
// for bad options, a missing dataset and a corrupt checkpoint.
#include <nlohmann/json.hpp>

#include "tessera/models/vision.h"
#include "tessera/train/checkpoint.h"
#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST_F(CliTest, TrainJsonReportAndOutputs) {
  REQUIRE_FASHION_MNIST();
  const CliResult r = run("train --train-limit 256 --test-limit 100 --epochs 1 --json --quiet --out " +
                          shell_quote(path("out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // --quiet
  EXPECT_EQ(count_lines(r.out), 1) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double acc = j.at("test_accuracy").get<double>();
  EXPECT_GE(acc, 0.0);
  EXPECT_LE(acc, 1.0);
  EXPECT_GT(j.at("samples_per_s").get<double>(), 0.0);
  EXPECT_GT(j.at("wall_s").get<double>(), 0.0);
  EXPECT_EQ(j.at("epochs").get<int64_t>(), 1);
  EXPECT_EQ(j.at("model").get<std::string>(), "mlp");
  EXPECT_EQ(j.at("optimizer").get<std::string>(), "adam");
  EXPECT_EQ(j.at("batch_size").get<int64_t>(), 64);
  EXPECT_EQ(j.at("checkpoint").get<std::string>(), (path("out") / "checkpoint.safetensors").string());
  for (const char* file : {"checkpoint.safetensors", "metrics.csv", "curves.png"}) {
    EXPECT_TRUE(std::filesystem::exists(path("out") / file)) << file;
  }
  EXPECT_EQ(count_lines(read_file(path("out") / "metrics.csv")), 2);
}

TEST_F(CliTest, TrainPrintsProgressUnlessQuiet) {
  REQUIRE_FASHION_MNIST();
  const CliResult r = run("train --train-limit 64 --test-limit 50 --batch-size 32 --optimizer sgd --lr 0.1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // no --json
  EXPECT_TRUE(contains(r.err, "training mlp")) << r.err;
  EXPECT_TRUE(contains(r.err, "epoch 1: train loss")) << r.err;
  // Each epoch's evaluation shows its own progress, with a rate and an ETA, like training.
  EXPECT_TRUE(contains(r.err, "test 1/1 100% 50/50")) << r.err;
  EXPECT_TRUE(contains(r.err, "/s")) << r.err;
  EXPECT_TRUE(contains(r.err, "eta")) << r.err;
  EXPECT_TRUE(contains(r.err, "done: test accuracy")) << r.err;
  // The default output folder is runs/MODEL in the working directory.
  EXPECT_TRUE(std::filesystem::exists(path("runs/mlp/checkpoint.safetensors")));
}

TEST_F(CliTest, TrainRejectsBadValuesWithUsageErrors) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--epochs 0", "--epochs"},
      {"--optimizer foo", "--optimizer"},
      {"--lr -1", "--lr"},
      {"--lr 0", "--lr"},
      {"--batch-size 0", "--batch-size"},
      {"--model resnet", "--model"},
      {"--schedule linear", "--schedule"},
      {"--momentum 2", "--momentum"},
      {"--epochs many", "--epochs"},
      {"--warmup -3", "--warmup"},
      {"--clip-norm -1", "--clip-norm"},
      {"--bogus", "--bogus"},
  };
  for (const auto& [args, option] : cases) {
    const CliResult r = run("train " + args + " --data-dir /nonexistent");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "tessera: error:")) << args << ": " << r.err;
    EXPECT_TRUE(contains(r.err, option)) << args << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  const CliResult missing = run("train --resume " + shell_quote(path("absent.safetensors").string()));
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_TRUE(contains(missing.err, "absent.safetensors")) << missing.err;
}

TEST_F(CliTest, TrainMissingDatasetNamesThePackage) {
  const CliResult r = run("train --data-dir /nonexistent --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "dataset-fashion-mnist")) << r.err;
  EXPECT_TRUE(contains(r.err, "/nonexistent")) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

TEST_F(CliTest, TrainResumeFromCorruptCheckpointNamesTheFile) {
  write_file(path("broken.safetensors"), std::string("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":", 13));
  const CliResult r = run("train --quiet --epochs 2 --resume " + shell_quote(path("broken.safetensors").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "broken.safetensors")) << r.err;
  EXPECT_TRUE(contains(r.err, "tessera: error:")) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

// `tessera train --resume` with a checkpoint whose epoch reads "-1000000" (which used to train a million
// epochs) or "1xyz" (read as 1) fails at once, naming the file and the value.
TEST_F(CliTest, TrainResumeRefusesMalformedEpochMetadata) {
  ops::Generator gen(0);
  auto mlp = models::mlp(gen);
  for (const char* epoch : {"-1000000", "1xyz"}) {
    const std::string ckpt = path("bad_epoch.safetensors").string();
    train::save_checkpoint(ckpt, *mlp, nullptr, {{"model", "mlp"}, {"epoch", epoch}});
    const CliResult r = run("train --quiet --epochs 2 --data-dir /nonexistent --resume " + shell_quote(ckpt));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "bad_epoch.safetensors")) << r.err;
    EXPECT_TRUE(contains(r.err, std::string("metadata 'epoch' is '") + epoch + "'")) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
}

// An empty training or test set exited 0 with "-nan" metrics; now it is an error (exit code 1).
TEST_F(CliTest, TrainRefusesAnEmptyDataset) {
  write_tiny_fashion_mnist(path("empty"), 0, 0);
  const CliResult r = run("train --quiet --json --data-dir " + shell_quote(path("empty").string()) + " --out " +
                          shell_quote(path("out").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "the training set")) << r.err;
  EXPECT_TRUE(contains(r.err, "is empty")) << r.err;
  EXPECT_FALSE(contains(r.out, "nan")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(path("out") / "metrics.csv"));
}

TEST_F(CliTest, TrainHelpListsItsOptions) {
  const CliResult r = run("train --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option :
       {"--epochs", "--batch-size", "--lr", "--optimizer", "--schedule", "--warmup", "--clip-norm", "--seed", "--out",
        "--resume", "--json", "--quiet", "--data-dir", "--train-limit", "--test-limit", "--dataset", "--data",
        "--test-data", "--label-column"}) {
    EXPECT_TRUE(contains(r.out, option)) << option << " missing from\n" << r.out;
  }
}
