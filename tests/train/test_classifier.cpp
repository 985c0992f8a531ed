// train_classifier end to end on a small slice of Fashion-MNIST: bit-identical resume, the files it
// writes (checkpoint, metrics.csv, curves.png), the JSON report, and its option errors.
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/io/safetensors.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/classifier.h"
#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

train::TrainOptions small_run(const std::string& out_dir, int64_t epochs) {
  train::TrainOptions o;
  o.train_limit = 128;
  o.test_limit = 64;
  o.batch_size = 32;
  o.seed = 3;
  o.epochs = epochs;
  o.out_dir = out_dir;
  o.progress = false;
  return o;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

void expect_identical_files(const std::string& a, const std::string& b) {
  const io::SafetensorsFile fa = io::load_safetensors_with_metadata(a), fb = io::load_safetensors_with_metadata(b);
  ASSERT_EQ(fa.tensors.size(), fb.tensors.size());
  int model_tensors = 0, optim_tensors = 0;
  for (const auto& [name, arr] : fa.tensors) {
    ASSERT_EQ(fb.tensors.count(name), 1u) << name;
    const Array& other = fb.tensors.at(name);
    ASSERT_EQ(arr.dtype(), other.dtype()) << name;
    ASSERT_EQ(arr.shape(), other.shape()) << name;
    const Array ca = arr.contiguous(), cb = other.contiguous();
    EXPECT_EQ(std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()), 0) << name << " differs";
    model_tensors += name.rfind("model.", 0) == 0;
    optim_tensors += name.rfind("optim.", 0) == 0;
  }
  EXPECT_EQ(model_tensors, 8);   // the MLP: 4 Linear layers
  EXPECT_EQ(optim_tensors, 16);  // Adam: 2 slots per parameter
  for (const char* key : {"epoch", "optim.step", "optim.optimizer", "model", "seed"}) {
    EXPECT_EQ(fa.metadata.at(key), fb.metadata.at(key)) << key;
  }
}

}  // namespace

TEST(TrainClassifier, ResumeIsBitIdentical) {
  REQUIRE_FASHION_MNIST();
  TempDir dir;
  // Two epochs straight.
  const train::TrainReport straight = train::train_classifier(small_run(dir / "straight", 2), nullptr);
  ASSERT_EQ(straight.epochs.size(), 2u);
  // One epoch, then a second run resuming from its checkpoint into another folder.
  const train::TrainReport first = train::train_classifier(small_run(dir / "split", 1), nullptr);
  ASSERT_EQ(first.epochs.size(), 1u);
  train::TrainOptions resume = small_run(dir / "resumed", 2);
  resume.resume = dir / "split/checkpoint.safetensors";
  const train::TrainReport second = train::train_classifier(resume, nullptr);

  expect_identical_files(dir / "straight/checkpoint.safetensors", dir / "resumed/checkpoint.safetensors");
  EXPECT_EQ(train::read_checkpoint_metadata(dir / "resumed/checkpoint.safetensors").at("epoch"), "2");
  EXPECT_EQ(train::read_checkpoint_metadata(dir / "resumed/checkpoint.safetensors").at("optim.step"), "8");
  // The batch-loss history survives the resume (checkpoint metadata "loss_curve"): the resumed run's
  // curve is the unbroken run's, point for point, and so is the copy in its checkpoint.
  ASSERT_EQ(first.loss_curve.size(), 4u);  // 4 steps per epoch: one point each
  EXPECT_EQ(second.loss_curve, straight.loss_curve);
  EXPECT_EQ(train::read_checkpoint_metadata(dir / "resumed/checkpoint.safetensors").at("loss_curve"),
            train::read_checkpoint_metadata(dir / "straight/checkpoint.safetensors").at("loss_curve"));
  // The same weights give the same evaluation.
  EXPECT_EQ(second.test_accuracy, straight.test_accuracy);
  EXPECT_EQ(second.epochs.back().test_loss, straight.epochs.back().test_loss);
  EXPECT_EQ(second.epochs.back().train_loss, straight.epochs.back().train_loss);
  // The resumed run carries the first epoch's metrics forward from the checkpoint's folder.
  ASSERT_EQ(second.epochs.size(), 2u);
  EXPECT_EQ(second.epochs[0].epoch, 1);
  EXPECT_NEAR(second.epochs[0].test_accuracy, first.epochs[0].test_accuracy, 1e-6);
  const std::vector<std::string> csv = lines_of(read_file(dir / "resumed/metrics.csv"));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[1], lines_of(read_file(dir / "split/metrics.csv"))[1]);
  EXPECT_EQ(csv[2].substr(0, 2), "2,");
  // The second epoch changed the weights, so the comparison above is not vacuous.
  const io::SafetensorsFile after_one = io::load_safetensors_with_metadata(dir / "split/checkpoint.safetensors");
  const io::SafetensorsFile after_two = io::load_safetensors_with_metadata(dir / "straight/checkpoint.safetensors");
  const Array w1 = after_one.tensors.at("model.1.weight").contiguous(),
              w2 = after_two.tensors.at("model.1.weight").contiguous();
  EXPECT_NE(std::memcmp(w1.raw_data(), w2.raw_data(), w1.nbytes()), 0);
}

TEST(TrainClassifier, WritesMetricsCurvesCheckpointAndReport) {
  REQUIRE_FASHION_MNIST();
  TempDir dir;
  train::TrainOptions o = small_run(dir / "run", 2);
  o.train_limit = 96;
  o.test_limit = 100;
  o.optimizer = "sgd";
  o.lr = 0.05;
  o.schedule = "cosine";
  o.warmup_steps = 2;
  o.clip_norm = 1.0;
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  const train::TrainReport report = train::train_classifier(o, log);
  std::rewind(log);
  std::string logged;
  for (int c; (c = std::fgetc(log)) != EOF;) logged += static_cast<char>(c);
  std::fclose(log);
  EXPECT_TRUE(contains(logged, "training mlp (1462538 parameters) on 96 fashion-mnist examples, 2 epochs")) << logged;
  EXPECT_TRUE(contains(logged, "epoch 1: train loss")) << logged;
  EXPECT_TRUE(contains(logged, "epoch 2: train loss")) << logged;

  ASSERT_EQ(report.epochs.size(), 2u);
  EXPECT_EQ(report.parameters, 784 * 1024 + 1024 + 1024 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10);
  EXPECT_EQ(report.test_accuracy, report.epochs.back().test_accuracy);
  EXPECT_GE(report.test_accuracy, 0.0);
  EXPECT_LE(report.test_accuracy, 1.0);
  // Accuracy is a multiple of 1/100 with 100 test examples.
  EXPECT_NEAR(report.test_accuracy * 100, std::round(report.test_accuracy * 100), 1e-9);
  EXPECT_GT(report.samples_per_s, 0.0);
  EXPECT_GT(report.wall_s, 0.0);
  EXPECT_FALSE(report.loss_curve.empty());
  EXPECT_EQ(report.checkpoint, dir / "run/checkpoint.safetensors");

  const std::vector<std::string> csv = lines_of(read_file(dir / "run/metrics.csv"));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[0], "epoch,train_loss,test_loss,test_accuracy,samples_per_s,seconds");
  for (size_t i = 1; i < csv.size(); ++i) {
    std::string row = csv[i];
    std::replace(row.begin(), row.end(), ',', ' ');
    std::istringstream fields(row);
    int64_t epoch = 0;
    double train_loss = 0, test_loss = 0, acc = 0, rate = 0, seconds = 0;
    ASSERT_TRUE(static_cast<bool>(fields >> epoch >> train_loss >> test_loss >> acc >> rate >> seconds)) << csv[i];
    EXPECT_EQ(epoch, static_cast<int64_t>(i));
    EXPECT_NEAR(train_loss, report.epochs[i - 1].train_loss, 1e-6);
    EXPECT_NEAR(test_loss, report.epochs[i - 1].test_loss, 1e-6);
    EXPECT_NEAR(acc, report.epochs[i - 1].test_accuracy, 1e-6);
    EXPECT_GT(rate, 0);
    EXPECT_GT(seconds, 0);
  }

  const std::string png = read_file(dir / "run/curves.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  const nlohmann::json j = nlohmann::json::parse(train::report_json(o, report));
  EXPECT_EQ(j.at("test_accuracy").get<double>(), report.test_accuracy);
  EXPECT_EQ(j.at("samples_per_s").get<double>(), report.samples_per_s);
  EXPECT_EQ(j.at("wall_s").get<double>(), report.wall_s);
  EXPECT_EQ(j.at("epochs").get<int64_t>(), 2);
  EXPECT_EQ(j.at("optimizer").get<std::string>(), "sgd");
  EXPECT_EQ(j.at("model").get<std::string>(), "mlp");
  EXPECT_EQ(j.at("checkpoint").get<std::string>(), report.checkpoint);
  EXPECT_EQ(j.at("parameters").get<int64_t>(), report.parameters);

  // The checkpoint records where training stopped; resuming it with no epochs left is an error.
  const auto meta = train::read_checkpoint_metadata(report.checkpoint);
  EXPECT_EQ(meta.at("epoch"), "2");
  EXPECT_EQ(meta.at("optim.step"), "6");  // 96 / 32 batches per epoch
  EXPECT_EQ(meta.at("optim.optimizer"), "sgd");
  train::TrainOptions again = o;
  again.resume = report.checkpoint;
  EXPECT_TESSERA_ERROR(train::train_classifier(again, nullptr), report.checkpoint, "already completed 2 epochs");
  // Resuming with another optimiser is an error naming both.
  again.epochs = 3;
  again.optimizer = "adam";
  EXPECT_TESSERA_ERROR(train::train_classifier(again, nullptr), report.checkpoint, "adam", "'sgd'");
}

TEST(TrainClassifier, WithoutOutDirWritesNothing) {
  REQUIRE_FASHION_MNIST();
  TempDir dir;
  train::TrainOptions o = small_run("", 1);
  o.train_limit = 32;
  o.test_limit = 10;
  o.model = "cnn";
  const train::TrainReport report = train::train_classifier(o, nullptr);
  EXPECT_TRUE(report.checkpoint.empty());
  EXPECT_EQ(report.epochs.size(), 1u);
  EXPECT_EQ(report.parameters, 32 * 9 + 32 + 64 * 32 * 9 + 64 + 1600 * 128 + 128 + 128 * 10 + 10);
  EXPECT_EQ(nlohmann::json::parse(train::report_json(o, report)).count("checkpoint"), 0u);
}

TEST(TrainClassifier, OptionErrors) {
  // All of these fail before any data is read.
  auto with = [](auto change) {
    train::TrainOptions o;
    o.data_dir = "/nonexistent";
    change(o);
    return o;
  };
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.epochs = 0; }), nullptr), "--epochs", "0");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.batch_size = 0; }), nullptr), "--batch-size");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.lr = 0; }), nullptr), "--lr", "0");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.lr = -1; }), nullptr), "--lr", "-1");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.lr = NAN; }), nullptr), "--lr", "nan");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.optimizer = "lion"; }), nullptr),
                       "unknown optimizer 'lion'", "adam, adamw, sgd or radam");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.schedule = "linear"; }), nullptr),
                       "unknown schedule 'linear'");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.dataset = "cifar10"; }), nullptr),
                       "unknown dataset 'cifar10'");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.model = "resnet"; }), nullptr),
                       "unknown model 'resnet'", "mlp", "cnn");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.train_limit = -1; }), nullptr), "limits");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.clip_norm = -1; }), nullptr), "--clip-norm");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.warmup_steps = -5; }), nullptr), "--warmup", "-5");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.momentum = 1.5; }), nullptr), "--momentum");
  EXPECT_TESSERA_ERROR(train::train_classifier(with([](auto& o) { o.weight_decay = -1; }), nullptr), "--weight-decay");
}

TEST(TrainClassifier, MissingDatasetNamesThePackage) {
  train::TrainOptions o;
  o.data_dir = "/nonexistent/fashion";
  EXPECT_TESSERA_ERROR(train::train_classifier(o, nullptr), "/nonexistent/fashion", "dataset-fashion-mnist");
}

TEST(TrainClassifier, ResumeChecksTheCheckpointBeforeLoadingData) {
  TempDir dir;
  // A CNN checkpoint cannot resume the MLP.
  ops::Generator gen(0);
  auto cnn = models::cnn(gen);
  const std::string path = dir / "cnn.safetensors";
  train::save_checkpoint(path, *cnn, nullptr, {{"model", "cnn"}, {"epoch", "1"}});
  train::TrainOptions o;
  o.data_dir = "/nonexistent";  // never reached
  o.epochs = 2;
  o.resume = path;
  EXPECT_TESSERA_ERROR(train::train_classifier(o, nullptr), path, "holds model 'cnn', not 'mlp'");
  const std::string corrupt = dir / "corrupt.safetensors";
  write_file(corrupt, "garbage");
  o.resume = corrupt;
  EXPECT_TESSERA_ERROR(train::train_classifier(o, nullptr), corrupt);
}

// A checkpoint's training position is parsed strictly before any data is loaded: "-1000000" used to
// train a million epochs and "1xyz" to read as 1.
TEST(TrainClassifier, ResumeRefusesMalformedCheckpointPositions) {
  TempDir dir;
  ops::Generator gen(0);
  auto mlp = models::mlp(gen);
  const std::string path = dir / "mlp.safetensors";
  train::TrainOptions o;
  o.data_dir = "/nonexistent";  // never reached
  o.epochs = 2;
  o.resume = path;
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"epoch", "-1000000"}}, "metadata 'epoch' is '-1000000'"},
      {{{"epoch", "1xyz"}}, "metadata 'epoch' is '1xyz'"},
      {{{"epoch", "1"}, {"seed", "-3"}}, "metadata 'seed' is '-3'"},
      {{{"epoch", "1"}, {"batch_size", "0"}}, "metadata 'batch_size' is '0'"},
      {{{"epoch", "1"}, {"metrics", "garbage"}}, "metadata 'metrics' holds 0 complete rows and a malformed line"},
      {{{"epoch", "1"}, {"metrics", std::string(train::kMetricsHeader) + "\n"}},
       "holds 0 complete rows, expected the 1"},
  };
  for (const auto& [extra, message] : cases) {
    std::map<std::string, std::string> meta = extra;
    meta["model"] = "mlp";
    train::save_checkpoint(path, *mlp, nullptr, meta);
    EXPECT_TESSERA_ERROR(train::train_classifier(o, nullptr), path, message);
  }
}

// An empty split trains or evaluates nothing (0 / 0 = NaN metrics, exit code 0 before): refused.
TEST(TrainClassifier, RefusesEmptyTrainingOrTestSets) {
  TempDir dir;
  write_tiny_fashion_mnist(dir.path() / "no_train", 0, 8);
  write_tiny_fashion_mnist(dir.path() / "no_test", 8, 0);
  train::TrainOptions o = small_run("", 1);
  o.data_dir = dir / "no_train";
  EXPECT_TESSERA_ERROR(train::train_classifier(o, nullptr), "the training set", "is empty", "no_train");
  o.data_dir = dir / "no_test";
  EXPECT_TESSERA_ERROR(train::train_classifier(o, nullptr), "the test set", "is empty", "no_test");
}

namespace {

std::string without_trailing_part_of_last_line(const std::string& csv, size_t keep_of_last) {
  const size_t last_start = csv.rfind('\n', csv.size() - 2) + 1;
  return csv.substr(0, last_start + keep_of_last);
}

}  // namespace

// A run killed while writing metrics.csv (a torn last row), or between its checkpoint and metrics.csv (a
// missing last row), then resumed: the rows come back from the checkpoint's own copy. Before, the
// history was dropped whole ("partial history: better none") and the resumed file began at epoch 3.
TEST(TrainClassifier, ResumeRepairsATornOrShortMetricsFile) {
  TempDir dir;
  write_tiny_fashion_mnist(dir.path() / "data", 64, 32);
  train::TrainOptions o = small_run(dir / "run", 2);
  o.data_dir = dir / "data";
  o.train_limit = 0;
  o.test_limit = 0;
  train::train_classifier(o, nullptr);
  const std::string metrics = dir / "run/metrics.csv";
  const std::vector<std::string> original = lines_of(read_file(metrics));
  ASSERT_EQ(original.size(), 3u);
  const std::string checkpoint = dir / "run/checkpoint.safetensors";
  EXPECT_EQ(train::read_checkpoint_metadata(checkpoint).at("metrics"), read_file(metrics));
  const std::string saved_checkpoint = read_file(checkpoint);

  const std::string torn = without_trailing_part_of_last_line(read_file(metrics), 5);  // "2,0.9" and no newline
  const std::string short_file = without_trailing_part_of_last_line(read_file(metrics), 0);
  for (const std::string& damaged : {torn, short_file}) {
    write_file(checkpoint, saved_checkpoint);
    write_file(metrics, damaged);
    train::TrainOptions resume = o;
    resume.epochs = 3;
    resume.resume = checkpoint;
    const train::TrainReport report = train::train_classifier(resume, nullptr);
    ASSERT_EQ(report.epochs.size(), 3u);
    const std::vector<std::string> repaired = lines_of(read_file(metrics));
    ASSERT_EQ(repaired.size(), 4u) << read_file(metrics);
    EXPECT_EQ(repaired[0], original[0]);
    EXPECT_EQ(repaired[1], original[1]);
    EXPECT_EQ(repaired[2], original[2]);
    EXPECT_EQ(repaired[3].substr(0, 2), "3,");
  }
}

// A checkpoint without its own metrics copy (written before it had one) falls back to the metrics.csv
// beside it, dropping a torn line after the rows it needs.
TEST(TrainClassifier, ResumeFromACheckpointWithoutMetricsReadsTheCsvTolerantly) {
  TempDir dir;
  write_tiny_fashion_mnist(dir.path() / "data", 64, 32);
  train::TrainOptions o = small_run(dir / "run", 2);
  o.data_dir = dir / "data";
  o.train_limit = 0;
  o.test_limit = 0;
  train::train_classifier(o, nullptr);
  const std::string checkpoint = dir / "run/checkpoint.safetensors";
  io::SafetensorsFile file = io::load_safetensors_with_metadata(checkpoint);
  std::map<std::string, std::string> meta = file.metadata;
  meta.erase("metrics");
  const StateDict& tensors = file.tensors;
  const std::string old_style = dir / "old/checkpoint.safetensors";
  std::filesystem::create_directories(dir.path() / "old");
  io::save_safetensors(old_style, tensors, meta);
  const std::string rows = read_file(dir / "run/metrics.csv");
  write_file(dir / "old/metrics.csv", rows + "3,0.51");  // a torn row of an epoch the checkpoint lacks
  train::TrainOptions resume = o;
  resume.epochs = 3;
  resume.resume = old_style;
  resume.out_dir = dir / "resumed";
  train::train_classifier(resume, nullptr);
  const std::vector<std::string> got = lines_of(read_file(dir / "resumed/metrics.csv"));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1], lines_of(rows)[1]);
  EXPECT_EQ(got[2], lines_of(rows)[2]);
}
