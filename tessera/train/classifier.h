#pragma once
// Supervised training of an image classifier end to end: data, model, optimiser, per-epoch evaluation,
// checkpoints, a metrics CSV and a PNG of the curves. `tessera train` is a thin layer over this.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/train/limits.h"
#include "tessera/train/metrics_csv.h"

namespace tessera::train {

struct TrainOptions {
  std::string dataset = "fashion-mnist";  // fashion-mnist | csv | image-folder (train/data_source.h)
  std::string data_dir;  // fashion-mnist: where its files are (empty: the Debian package's folder)
  std::string data;          // csv / image-folder: the training file or folder
  std::string test_data;     // csv / image-folder: the test set (empty: every fifth example of `data`)
  std::string label_column;  // csv: the label column's name (empty: the last column)
  std::string model = "mlp";
  int64_t epochs = 1;
  int64_t batch_size = 64;
  double lr = 1e-3;
  std::string optimizer = "adam";  // adam | adamw | sgd | radam
  double momentum = 0.9;           // sgd only
  double weight_decay = 0.0;
  std::string schedule = "constant";  // constant | cosine | step
  int64_t warmup_steps = 0;
  double clip_norm = 0.0;  // 0: no clipping
  uint64_t seed = 0;
  std::string out_dir;  // empty: write nothing
  std::string resume;   // a checkpoint to continue from
  int64_t train_limit = 0;  // use only the first N training examples (0: all)
  int64_t test_limit = 0;
  bool progress = true;
  bool compiled = true;  // trace the whole step once and run it compiled (false: eager, op by op)
  std::string backend;   // empty: the default backend
};

struct TrainReport {
  std::vector<EpochRecord> epochs;
  std::vector<std::pair<double, double>> loss_curve;  // (epoch position, smoothed batch loss), resumed runs' too
  double test_accuracy = 0;
  double samples_per_s = 0;  // over all epochs trained in this run
  double wall_s = 0;
  int64_t parameters = 0;
  std::string checkpoint;  // path written, if any
};

// Validates the options (clear errors for bad values; an empty training or test set is one) and trains.
// Progress and per-epoch lines go to `log` (nullptr: silent); so does the progress of each epoch's
// evaluation, which runs compiled on the training backend unless `compiled` is false.
// Checkpoints record the model's input shape and classes (train/model_spec.h) and the batch-loss history
// (metadata "loss_curve", train/curves.h), so curves.png of a resumed run shows the whole history.
// Each checkpoint carries the metrics rows up to its epoch (metadata "metrics"), so a resumed run
// rewrites metrics.csv from that known-good copy at once: a row lost or torn when a run was killed
// between writing its checkpoint and its metrics.csv comes back. Checkpoints without the entry fall
// back to the metrics.csv beside them, whose torn last line is dropped.
TrainReport train_classifier(const TrainOptions& options, std::FILE* log = stderr);

// One JSON object with the report's headline numbers (test_accuracy, samples_per_s, wall_s, ...).
std::string report_json(const TrainOptions& options, const TrainReport& report);

}  // namespace tessera::train
