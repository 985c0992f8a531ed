#pragma once
// Evaluating a classifier on a labelled dataset: mean cross-entropy, accuracy, per-class precision /
// recall / F1 and the confusion matrix. By default the forward pass runs compiled on the training
// backend (one traced graph per batch shape, parameters read at every call, as training's steps are),
// with a progress line (rate, ETA) like training's.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/data/dataset.h"
#include "tessera/nn/module.h"

namespace tessera {
class CompiledFunction;
}

namespace tessera::train {

struct EvalOptions {
  int64_t batch_size = 1000;
  bool compiled = true;                   // false: op by op (eager)
  backends::Backend* backend = nullptr;   // null: the default backend
  std::FILE* progress = nullptr;          // where the progress line goes (null: nowhere)
  std::string label = "evaluating";       // the progress line's prefix
};

struct ClassFigures {
  std::string name;
  int64_t support = 0;    // examples of this class
  int64_t predicted = 0;  // examples predicted as this class
  double precision = 0, recall = 0, f1 = 0;
};

struct Evaluation {
  int64_t examples = 0;
  double mean_loss = 0;
  double accuracy = 0;
  std::vector<std::string> classes;
  std::vector<std::vector<int64_t>> confusion;  // [true class][predicted class]
  size_t compiled_graphs = 0;                   // graphs traced and compiled (0 when eager)

  std::vector<ClassFigures> per_class() const;
};

// Evaluates one model again and again (each epoch of a run) with the graphs it compiled the first time.
// `classes` names the model's outputs; labels outside [0, classes) are an error naming the example.
class Evaluator {
 public:
  Evaluator(nn::Module& model, std::vector<std::string> classes, EvalOptions options = {});
  ~Evaluator();
  Evaluation run(const data::TensorDataset& data);
  void set_label(std::string label) { options_.label = std::move(label); }

 private:
  nn::Module& model_;
  std::vector<std::string> classes_;
  EvalOptions options_;
  std::unique_ptr<CompiledFunction> compiled_;
};

Evaluation evaluate_classifier(nn::Module& model, const data::TensorDataset& data,
                               const std::vector<std::string>& classes, const EvalOptions& options = {});

// The figures as text: a summary line, a per-class table and the confusion matrix.
std::string evaluation_text(const Evaluation& e);
// One JSON object: examples, accuracy, mean_loss, classes, per_class, confusion.
std::string evaluation_json(const Evaluation& e);

}  // namespace tessera::train
