// tessera eval --checkpoint C: evaluates a trained classifier on Fashion-MNIST's test split or on a CSV
// file / image folder: accuracy, mean loss, per-class precision/recall/F1 and the confusion matrix,
// printed as text (or one JSON line) and drawn as a PNG. The model is rebuilt from the checkpoint's
// metadata (train/model_spec.h), so the command needs nothing but the checkpoint and the data.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "command.h"
#include "dataset_options.h"
#include "file_io.h"
#include "usage_errors.h"
#include "tessera/backends/backend.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/data_source.h"
#include "tessera/train/evaluation.h"
#include "tessera/train/limits.h"
#include "tessera/train/model_spec.h"
#include "tessera/viz/confusion.h"

namespace tessera::cli {

namespace {

struct EvalCli {
  std::string checkpoint;
  train::DataOptions data;
  bool dataset_given = false;
  int64_t limit = 0;
  int64_t batch_size = 1000;
  std::string backend = "cpu";
  std::string confusion_png;
  bool eager = false;
  bool json = false;
  bool quiet = false;
};

int run_eval(EvalCli& cli) {
  const std::map<std::string, std::string> meta = train::read_checkpoint_metadata(cli.checkpoint);
  const train::ModelSpec spec = train::spec_from_metadata(cli.checkpoint, meta);
  // Without --dataset, the kind of data the checkpoint was trained on (its --data must still be given).
  if (!cli.dataset_given) {
    if (auto d = meta.find("dataset"); d != meta.end()) cli.data.dataset = d->second;
  }
  const std::filesystem::path png = cli.confusion_png.empty()
                                        ? std::filesystem::path(cli.checkpoint).parent_path() / "confusion.png"
                                        : std::filesystem::path(cli.confusion_png);
  check_writable_folder(png.parent_path().string(), false);  // before the data is read

  const train::ClassificationData data = train::load_evaluation_data(cli.data, spec.classes);
  TESSERA_CHECK(data.example_shape == spec.input,
                "checkpoint {} holds a {} for examples of shape {}, but {} holds examples of shape {}", cli.checkpoint,
                spec.model, shape_str(spec.input), data.source, shape_str(data.example_shape));
  const data::TensorDataset examples =
      cli.limit > 0 && cli.limit < data.test->size() ? data.test->slice(0, cli.limit) : *data.test;

  ops::Generator gen(0);  // the weights come from the checkpoint
  std::shared_ptr<nn::Module> model = train::build_model(spec, gen);
  train::load_checkpoint(cli.checkpoint, *model, nullptr);
  backends::Backend& backend = backends::backend_by_name(cli.backend);
  const train::Evaluation e = train::evaluate_classifier(
      *model, examples, spec.classes,
      {.batch_size = cli.batch_size, .compiled = !cli.eager, .backend = &backend,
       .progress = cli.quiet ? nullptr : stderr, .label = "evaluating"});
  viz::write_confusion_png(png.string(), e.confusion, e.classes,
                           fmt::format("{}: accuracy {:.2f}%", spec.model, e.accuracy * 100));
  if (cli.json) {
    std::cout << train::evaluation_json(e) << std::endl;
  } else {
    std::cout << fmt::format("checkpoint {} ({}) on {}\n", cli.checkpoint, spec.model, data.source)
              << train::evaluation_text(e);
  }
  if (!cli.quiet) std::cerr << fmt::format("wrote {}\n", png.string());
  return kExitOk;
}

}  // namespace

Command add_eval_command(CLI::App& root) {
  auto cli = std::make_shared<EvalCli>();
  CLI::App* app = root.add_subcommand(
      "eval", "Evaluate a trained classifier: accuracy, loss, per-class figures and a confusion matrix (text and PNG)");
  app->add_option("--checkpoint", cli->checkpoint, "A checkpoint written by `tessera train`")
      ->required()
      ->check(CLI::ExistingFile);
  CLI::Option* dataset = nullptr;
  add_dataset_options(*app, cli->data.dataset, cli->data.data_dir, cli->data.data, cli->data.label_column);
  dataset = app->get_option("--dataset");
  dataset->description(dataset->get_description() + " (default: the checkpoint's)");
  app->add_option("--limit,--test-limit", cli->limit, "Evaluate only the first N examples (0: all)")
      ->check(non_negative_number());
  app->add_option("--batch-size", cli->batch_size, "Examples per batch")
      ->check(CLI::Range(int64_t{1}, train::kMaxBatchSize))
      ->capture_default_str();
  app->add_option("--backend,--device", cli->backend, "Backend to run on (cpu, cuda, vulkan, reference)")
      ->check(CLI::IsMember(backends::backend_names()))
      ->capture_default_str();
  app->add_option("--confusion-png", cli->confusion_png,
                  "Where to draw the confusion matrix (default: confusion.png beside the checkpoint)")
      ->check(output_file());
  app->add_flag("--eager", cli->eager, "Run op by op instead of compiled");
  app->add_flag("--json", cli->json, "Print one JSON line (accuracy, mean_loss, per_class, confusion) instead of text");
  app->add_flag("--quiet", cli->quiet, "No progress line");
  return {app, [cli, dataset] {
            cli->dataset_given = dataset->count() > 0;
            return run_eval(*cli);
          }};
}

}  // namespace tessera::cli
