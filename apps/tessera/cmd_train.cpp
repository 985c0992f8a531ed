// tessera train: trains a classifier (mlp or cnn) on Fashion-MNIST or the user's own CSV file or image
// folder, printing progress, per-epoch metrics, and writing a checkpoint, metrics.csv and curves.png
// into --out. With no options it runs the README's default job: one epoch of the MLP on Fashion-MNIST.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "dataset_options.h"
#include "file_io.h"
#include "usage_errors.h"
#include "tessera/backends/backend.h"
#include "tessera/train/classifier.h"
#include "tessera/train/limits.h"

namespace tessera::cli {

namespace {

struct TrainCli {
  train::TrainOptions options;
  bool json = false;
  bool quiet = false;
  bool eager = false;
};

int run_train(TrainCli& cli) {
  train::TrainOptions& o = cli.options;
  if (o.out_dir.empty()) o.out_dir = "runs/" + o.model;
  check_writable_folder(o.out_dir, /*create=*/true);  // before the data is read and the epochs run
  o.progress = !cli.quiet;
  o.compiled = !cli.eager;
  const train::TrainReport report = train::train_classifier(o, cli.quiet ? nullptr : stderr);
  if (!cli.quiet) {
    std::cerr << fmt::format("done: test accuracy {:.2f}%, {:.0f} samples/s, {:.1f} s; wrote {}\n",
                             report.test_accuracy * 100, report.samples_per_s, report.wall_s, o.out_dir);
  }
  if (cli.json) std::cout << train::report_json(o, report) << std::endl;
  return kExitOk;
}

}  // namespace

Command add_train_command(CLI::App& root) {
  auto cli = std::make_shared<TrainCli>();
  train::TrainOptions& o = cli->options;
  CLI::App* app = root.add_subcommand("train", "Train an image classifier (default: the MLP on Fashion-MNIST, 1 epoch)");
  add_dataset_options(*app, o.dataset, o.data_dir, o.data, o.label_column);
  app->add_option("--test-data", o.test_data,
                  "csv / image-folder: a separate test set (default: every fifth example of --data)");
  app->add_option("--model", o.model, "Model")->check(CLI::IsMember({"mlp", "cnn"}))->capture_default_str();
  app->add_option("--epochs", o.epochs, "Epochs to train")
      ->check(CLI::Range(int64_t{1}, train::kMaxEpochs))
      ->capture_default_str();
  app->add_option("--batch-size", o.batch_size, "Examples per step")
      ->check(CLI::Range(int64_t{1}, train::kMaxBatchSize))
      ->capture_default_str();
  app->add_option("--lr", o.lr, "Learning rate")->check(positive_number())->capture_default_str();
  app->add_option("--optimizer", o.optimizer, "Optimizer")->check(CLI::IsMember({"adam", "adamw", "sgd", "radam"}))
      ->capture_default_str();
  app->add_option("--momentum", o.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app->add_option("--weight-decay", o.weight_decay, "Weight decay")->check(non_negative_number())
      ->capture_default_str();
  app->add_option("--schedule", o.schedule, "Learning-rate schedule")
      ->check(CLI::IsMember({"constant", "cosine", "step"}))->capture_default_str();
  app->add_option("--warmup", o.warmup_steps, "Linear warm-up steps")->check(non_negative_number())
      ->capture_default_str();
  app->add_option("--clip-norm", o.clip_norm, "Clip gradients to this global L2 norm (0: off)")
      ->check(non_negative_number())->capture_default_str();
  app->add_option("--seed", o.seed, "Seed for initialisation and shuffling")->capture_default_str();
  app->add_option("--out", o.out_dir, "Output folder for checkpoint.safetensors, metrics.csv, curves.png "
                                      "(default: runs/MODEL)");
  app->add_option("--resume", o.resume, "Continue from this checkpoint")->check(CLI::ExistingFile);
  app->add_option("--train-limit", o.train_limit, "Use only the first N training examples (0: all)")
      ->check(non_negative_number());
  app->add_option("--test-limit", o.test_limit, "Use only the first N test examples (0: all)")
      ->check(non_negative_number());
  o.backend = "cpu";
  app->add_option("--backend,--device", o.backend, "Backend to run on (cpu, cuda, vulkan, reference)")
      ->check(CLI::IsMember(backends::backend_names()))
      ->capture_default_str();
  app->add_flag("--eager", cli->eager, "Run each step op by op instead of as one compiled graph");
  app->add_flag("--json", cli->json, "End with one JSON line: test_accuracy, samples_per_s, wall_s, ...");
  app->add_flag("--quiet", cli->quiet, "No progress or per-epoch lines");
  return {app, [cli] { return run_train(*cli); }};
}

}  // namespace tessera::cli
