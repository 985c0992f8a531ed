#include "tessera/train/classifier.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/core/parse_int.h"
#include "tessera/data/dataset.h"
#include "tessera/io/atomic_file.h"
#include "tessera/models/vision.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/curves.h"
#include "tessera/train/data_source.h"
#include "tessera/train/evaluation.h"
#include "tessera/train/model_spec.h"
#include "tessera/train/progress.h"
#include "tessera/train/train_step.h"

namespace tessera::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void validate(const TrainOptions& o) {
  const std::vector<std::string> datasets = dataset_names();
  TESSERA_CHECK(std::find(datasets.begin(), datasets.end(), o.dataset) != datasets.end(),
                "train: unknown dataset '{}' (expected {})", o.dataset, fmt::join(datasets, ", "));
  const std::vector<std::string> models = models::classifier_names();
  TESSERA_CHECK(std::find(models.begin(), models.end(), o.model) != models.end(),
                "train: unknown model '{}' (expected {})", o.model, fmt::join(models, " or "));
  TESSERA_CHECK(o.epochs >= 1 && o.epochs <= kMaxEpochs, "train: --epochs must be in [1, {}], got {}", kMaxEpochs,
                o.epochs);
  TESSERA_CHECK(o.batch_size >= 1 && o.batch_size <= kMaxBatchSize, "train: --batch-size must be in [1, {}], got {}",
                kMaxBatchSize, o.batch_size);
  TESSERA_CHECK(std::isfinite(o.lr) && o.lr > 0, "train: --lr must be a positive number, got {}", o.lr);
  TESSERA_CHECK(o.optimizer == "adam" || o.optimizer == "adamw" || o.optimizer == "sgd" || o.optimizer == "radam",
                "train: unknown optimizer '{}' (expected adam, adamw, sgd or radam)", o.optimizer);
  TESSERA_CHECK(o.schedule == "constant" || o.schedule == "cosine" || o.schedule == "step",
                "train: unknown schedule '{}' (expected constant, cosine or step)", o.schedule);
  TESSERA_CHECK(o.train_limit >= 0 && o.test_limit >= 0, "train: limits must be non-negative");
  TESSERA_CHECK(o.clip_norm >= 0, "train: --clip-norm must be non-negative, got {}", o.clip_norm);
  TESSERA_CHECK(o.warmup_steps >= 0, "train: --warmup must be non-negative, got {}", o.warmup_steps);
  TESSERA_CHECK(o.momentum >= 0 && o.momentum < 1, "train: --momentum must be in [0, 1), got {}", o.momentum);
  TESSERA_CHECK(o.weight_decay >= 0, "train: --weight-decay must be non-negative, got {}", o.weight_decay);
}

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainOptions& o, nn::Module& model) {
  if (o.optimizer == "sgd") {
    return std::make_unique<optim::SGD>(
        model, optim::SGDOptions{.lr = o.lr, .momentum = o.momentum, .weight_decay = o.weight_decay});
  }
  optim::AdamOptions a{.lr = o.lr, .weight_decay = o.weight_decay};
  // --weight-decay is given explicitly (default 0) for every optimiser, AdamW included.
  if (o.optimizer == "adamw") {
    return std::make_unique<optim::AdamW>(model, optim::AdamWOptions{.lr = o.lr, .weight_decay = o.weight_decay});
  }
  if (o.optimizer == "radam") return std::make_unique<optim::RAdam>(model, a);
  return std::make_unique<optim::Adam>(model, a);
}

optim::Schedule make_schedule(const TrainOptions& o, int64_t total_steps) {
  optim::Schedule s = optim::constant_lr(o.lr);
  if (o.schedule == "cosine") s = optim::cosine_lr(o.lr, std::max<int64_t>(1, total_steps - o.warmup_steps));
  if (o.schedule == "step") s = optim::step_lr(o.lr, std::max<int64_t>(1, total_steps / 3), 0.1);
  return o.warmup_steps > 0 ? optim::linear_warmup(s, o.warmup_steps) : s;
}

data::TensorDataset limit(const data::TensorDataset& d, int64_t n) {
  return n > 0 && n < d.size() ? d.slice(0, n) : d;
}

// The per-epoch rows 1..up_to of the run a checkpoint continues: the checkpoint's own copy (metadata
// "metrics", which must hold exactly those rows), else the complete rows of the metrics.csv beside it (a
// torn last line is dropped; a shorter history gives no rows, so curves never have a gap).
std::vector<EpochRecord> earlier_epochs(const std::string& checkpoint, const std::map<std::string, std::string>& meta,
                                        int64_t up_to) {
  auto kept = meta.find("metrics");
  if (kept != meta.end()) {
    ParsedMetrics parsed = parse_metrics_csv(kept->second);
    TESSERA_CHECK(parsed.complete && static_cast<int64_t>(parsed.rows.size()) == up_to,
                  "checkpoint {}: metadata 'metrics' holds {} complete rows{}, expected the {} epochs it records",
                  checkpoint, parsed.rows.size(), parsed.complete ? "" : " and a malformed line", up_to);
    return parsed.rows;
  }
  std::ifstream in(std::filesystem::path(checkpoint).parent_path() / "metrics.csv", std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  ParsedMetrics parsed = parse_metrics_csv(text.str());
  if (static_cast<int64_t>(parsed.rows.size()) < up_to) return {};
  parsed.rows.resize(static_cast<size_t>(up_to));  // rows of epochs after the checkpoint are redone
  return parsed.rows;
}

// Strictly parsed training position of a checkpoint to resume from, checked before any data is loaded.
int64_t resume_epoch(const TrainOptions& o, const std::map<std::string, std::string>& meta) {
  auto m = meta.find("model");
  TESSERA_CHECK(m != meta.end() && m->second == o.model, "train: checkpoint {} holds model '{}', not '{}'", o.resume,
                m == meta.end() ? std::string("unknown") : m->second, o.model);
  const int64_t epoch = checkpoint_epoch(o.resume, meta);
  TESSERA_CHECK(epoch < o.epochs, "train: checkpoint {} already completed {} epochs (--epochs is {})", o.resume, epoch,
                o.epochs);
  // Not used to resume, but a checkpoint whose position is garbage is not trusted either.
  if (auto seed = meta.find("seed"); seed != meta.end()) {
    parse_uint_or_fail(seed->second, UINT64_MAX, fmt::format("checkpoint {}: metadata 'seed'", o.resume));
  }
  if (auto batch = meta.find("batch_size"); batch != meta.end()) {
    parse_int_or_fail(batch->second, 1, kMaxBatchSize, fmt::format("checkpoint {}: metadata 'batch_size'", o.resume));
  }
  return epoch;
}

void write_metrics_csv(const std::string& path, const std::vector<EpochRecord>& rows) {
  io::write_file_atomic(path, metrics_csv(rows));
}

// The batch-loss history before a resumed run: the checkpoint's copy, none for older checkpoints.
LossCurve earlier_loss_curve(const std::string& checkpoint, const std::map<std::string, std::string>& meta) {
  auto kept = meta.find("loss_curve");
  if (kept == meta.end()) return {};
  return parse_loss_curve(kept->second, fmt::format("checkpoint {}: metadata 'loss_curve'", checkpoint));
}

// A resumed run must rebuild the model it continues: same inputs, same classes.
void check_same_spec(const std::string& checkpoint, const ModelSpec& saved, const ModelSpec& now) {
  TESSERA_CHECK(saved.input == now.input,
                "train: checkpoint {} was trained on examples of shape {}, but this data has {}", checkpoint,
                shape_str(saved.input), shape_str(now.input));
  TESSERA_CHECK(saved.classes == now.classes,
                "train: checkpoint {} was trained on {} classes ({}), but this data has {} ({})", checkpoint,
                saved.classes.size(), fmt::join(saved.classes, ", "), now.classes.size(), fmt::join(now.classes, ", "));
}

// About 100 points per epoch: enough for a readable curve, few enough for the checkpoint's metadata.
int64_t curve_stride(int64_t steps_per_epoch) { return std::max<int64_t>(1, steps_per_epoch / 100); }

}  // namespace

TrainReport train_classifier(const TrainOptions& o, std::FILE* log) {
  validate(o);
  const auto start = Clock::now();
  int64_t first_epoch = 0;
  std::vector<EpochRecord> history;
  LossCurve earlier_curve;
  std::map<std::string, std::string> resume_meta;
  if (!o.resume.empty()) {
    // Checked before loading the data, so that a wrong checkpoint fails at once.
    resume_meta = read_checkpoint_metadata(o.resume);
    first_epoch = resume_epoch(o, resume_meta);
    history = earlier_epochs(o.resume, resume_meta, first_epoch);
    earlier_curve = earlier_loss_curve(o.resume, resume_meta);
  }
  const ClassificationData data = load_training_data(
      {.dataset = o.dataset, .data_dir = o.data_dir, .data = o.data, .test_data = o.test_data, .label_column = o.label_column});
  auto train_set = std::make_shared<data::TensorDataset>(limit(*data.train, o.train_limit));
  const data::TensorDataset test_set = limit(*data.test, o.test_limit);
  // An empty split would train nothing and report 0 / 0 = NaN metrics.
  TESSERA_CHECK(train_set->size() > 0, "train: the training set in '{}' is empty (0 examples); nothing to train on",
                data.source);
  TESSERA_CHECK(test_set.size() > 0, "train: the test set in '{}' is empty (0 examples); nothing to evaluate on",
                data.source);
  const ModelSpec spec{o.model, data.example_shape, data.classes};
  if (!o.resume.empty()) check_same_spec(o.resume, spec_from_metadata(o.resume, resume_meta), spec);

  ops::Generator init_gen(o.seed);
  std::shared_ptr<nn::Module> model = build_model(spec, init_gen);
  std::unique_ptr<optim::Optimizer> opt = make_optimizer(o, *model);
  data::DataLoader loader(train_set, o.batch_size, /*shuffle=*/true, o.seed, /*drop_last=*/false);
  backends::Backend& backend = o.backend.empty() ? backends::default_backend() : backends::backend_by_name(o.backend);
  CompiledTrainStep compiled_step(
      *model, *opt,
      [](nn::Module& m, const Tensor& x, const Tensor& y) { return ops::cross_entropy(m(x), y); }, o.clip_norm,
      &backend);
  // Evaluation runs the way training does: compiled on the same backend unless --eager.
  Evaluator evaluator(*model, spec.classes,
                      {.compiled = o.compiled, .backend = &backend, .progress = o.progress ? log : nullptr});
  const int64_t steps_per_epoch = loader.num_batches();
  const optim::Schedule schedule = make_schedule(o, steps_per_epoch * o.epochs);

  TrainReport report;
  report.parameters = model->num_parameters();
  if (!o.resume.empty()) {
    TESSERA_CHECK(load_checkpoint(o.resume, *model, opt.get()).epoch == first_epoch,
                  "train: checkpoint {} changed while it was being read", o.resume);
    report.epochs = history;
    report.loss_curve = earlier_curve;
  }
  if (log) {
    fmt::print(log, "training {} ({} parameters) on {} {} examples, {} epochs, batch {}, {} lr {}\n", o.model,
               report.parameters, train_set->size(), o.dataset == "fashion-mnist" ? o.dataset : data.source,
               o.epochs - first_epoch, o.batch_size, o.optimizer,
               o.lr);
  }
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    // Repair first: a metrics.csv torn or cut short by a killed run holds the known-good rows again now,
    // not only after the next epoch.
    if (!o.resume.empty())
      write_metrics_csv((std::filesystem::path(o.out_dir) / "metrics.csv").string(), report.epochs);
  }

  // The smoothed loss continues where the checkpoint's curve ended, as if the run had never stopped.
  double smoothed = report.loss_curve.empty() ? NAN : report.loss_curve.back().second;
  const int64_t stride = curve_stride(steps_per_epoch);
  int64_t trained_samples = 0;
  double train_seconds = 0;
  for (int64_t epoch = first_epoch; epoch < o.epochs; ++epoch) {
    loader.set_epoch(epoch);
    const auto epoch_start = Clock::now();
    Progress progress(fmt::format("epoch {}/{}", epoch + 1, o.epochs), train_set->size(),
                      o.progress ? log : nullptr);
    double loss_sum = 0;
    for (int64_t b = 0; b < steps_per_epoch; ++b) {
      data::Batch batch = loader.batch(b);
      opt->set_lr(schedule(opt->step_count()));
      double l = 0;
      if (o.compiled) {
        l = compiled_step.step(batch.inputs, batch.targets);
      } else {
        const Tensor loss =
            ops::cross_entropy((*model)(Tensor::from_array(batch.inputs)), Tensor::from_array(batch.targets));
        opt->zero_grad();
        loss.backward();
        if (o.clip_norm > 0) optim::clip_grad_norm(opt->params(), o.clip_norm);
        opt->step();
        l = loss.item();
      }
      TESSERA_CHECK(std::isfinite(l), "train: the loss became {} at epoch {} step {} (try a lower --lr)", l, epoch + 1,
                    b + 1);
      loss_sum += l * static_cast<double>(batch.inputs.shape()[0]);
      smoothed = std::isnan(smoothed) ? l : 0.95 * smoothed + 0.05 * l;
      if (b % stride == 0 || b + 1 == steps_per_epoch) {
        report.loss_curve.emplace_back(static_cast<double>(epoch) + static_cast<double>(b + 1) / steps_per_epoch,
                                       smoothed);
      }
      progress.update(batch.inputs.shape()[0], fmt::format("loss {:.4f}", smoothed));
    }
    const double epoch_train_s = seconds_since(epoch_start);
    compiled_step.sync();
    progress.finish(fmt::format("loss {:.4f}", smoothed));
    trained_samples += train_set->size();
    train_seconds += epoch_train_s;

    EpochRecord rec;
    rec.epoch = epoch + 1;
    rec.train_loss = loss_sum / static_cast<double>(train_set->size());
    evaluator.set_label(fmt::format("test {}/{}", epoch + 1, o.epochs));
    const Evaluation eval = evaluator.run(test_set);
    rec.test_loss = eval.mean_loss;
    rec.test_accuracy = eval.accuracy;
    rec.samples_per_s = static_cast<double>(train_set->size()) / epoch_train_s;
    rec.seconds = seconds_since(epoch_start);
    report.epochs.push_back(rec);
    if (log) {
      fmt::print(log, "epoch {}: train loss {:.4f}, test loss {:.4f}, test accuracy {:.2f}%, {:.0f} samples/s\n",
                 rec.epoch, rec.train_loss, rec.test_loss, rec.test_accuracy * 100, rec.samples_per_s);
    }
    if (!o.out_dir.empty()) {
      report.checkpoint = (std::filesystem::path(o.out_dir) / "checkpoint.safetensors").string();
      // The checkpoint holds the metrics up to its epoch: the known-good state metrics.csv is rebuilt from.
      std::map<std::string, std::string> meta = spec_metadata(spec);
      meta.insert({{"epoch", std::to_string(epoch + 1)},
                   {"seed", std::to_string(o.seed)},
                   {"dataset", o.dataset},
                   {"batch_size", std::to_string(o.batch_size)},
                   {"metrics", metrics_csv(report.epochs)},
                   {"loss_curve", loss_curve_text(report.loss_curve)}});
      save_checkpoint(report.checkpoint, *model, opt.get(), meta);
      write_metrics_csv((std::filesystem::path(o.out_dir) / "metrics.csv").string(), report.epochs);
      write_curves_png((std::filesystem::path(o.out_dir) / "curves.png").string(), report.loss_curve, report.epochs);
    }
  }
  report.test_accuracy = report.epochs.back().test_accuracy;
  report.samples_per_s = train_seconds > 0 ? static_cast<double>(trained_samples) / train_seconds : 0;
  report.wall_s = seconds_since(start);
  return report;
}

std::string report_json(const TrainOptions& o, const TrainReport& r) {
  nlohmann::json j;
  j["model"] = o.model;
  j["dataset"] = o.dataset;
  j["optimizer"] = o.optimizer;
  j["epochs"] = r.epochs.empty() ? 0 : r.epochs.back().epoch;
  j["batch_size"] = o.batch_size;
  j["lr"] = o.lr;
  j["seed"] = o.seed;
  j["parameters"] = r.parameters;
  j["test_accuracy"] = r.test_accuracy;
  j["test_loss"] = r.epochs.empty() ? 0.0 : r.epochs.back().test_loss;
  j["train_loss"] = r.epochs.empty() ? 0.0 : r.epochs.back().train_loss;
  j["samples_per_s"] = r.samples_per_s;
  j["wall_s"] = r.wall_s;
  j["backend"] = o.backend.empty() ? backends::default_backend().name() : o.backend;
  j["compiled"] = o.compiled;
  if (!r.checkpoint.empty()) j["checkpoint"] = r.checkpoint;
  return j.dump();
}

}  // namespace tessera::train
