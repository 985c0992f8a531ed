#include "tessera/train/evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "tessera/api/transforms.h"
#include "tessera/ops/ops.h"
#include "tessera/train/progress.h"

namespace tessera::train {

namespace {

// The summed loss and the predicted classes of one batch.
std::vector<Tensor> forward(nn::Module& model, const Tensor& x, const Tensor& y) {
  const Tensor logits = model(x);
  return {ops::cross_entropy(logits, y, {.reduction = ops::Reduction::Sum}), ops::argmax(logits, 1)};
}

// Puts the model back into training mode however evaluation ends.
struct EvalMode {
  explicit EvalMode(nn::Module& m) : model(m) { model.eval(); }
  ~EvalMode() { model.train(); }
  nn::Module& model;
};

}  // namespace

std::vector<ClassFigures> Evaluation::per_class() const {
  std::vector<ClassFigures> out;
  for (size_t c = 0; c < classes.size(); ++c) {
    ClassFigures f;
    f.name = classes[c];
    for (size_t p = 0; p < classes.size(); ++p) {
      f.support += confusion[c][p];
      f.predicted += confusion[p][c];
    }
    const auto hits = static_cast<double>(confusion[c][c]);
    f.precision = f.predicted > 0 ? hits / static_cast<double>(f.predicted) : 0.0;
    f.recall = f.support > 0 ? hits / static_cast<double>(f.support) : 0.0;
    f.f1 = f.precision + f.recall > 0 ? 2 * f.precision * f.recall / (f.precision + f.recall) : 0.0;
    out.push_back(f);
  }
  return out;
}

Evaluator::Evaluator(nn::Module& model, std::vector<std::string> classes, EvalOptions options)
    : model_(model), classes_(std::move(classes)), options_(std::move(options)) {
  if (options_.compiled) {
    compiled_ = std::make_unique<CompiledFunction>(
        [&model](const std::vector<Tensor>& a) { return forward(model, a[0], a[1]); }, options_.backend);
  }
}

Evaluator::~Evaluator() = default;

Evaluation evaluate_classifier(nn::Module& model, const data::TensorDataset& data,
                               const std::vector<std::string>& classes, const EvalOptions& options) {
  return Evaluator(model, classes, options).run(data);
}

Evaluation Evaluator::run(const data::TensorDataset& data) {
  const EvalOptions& o = options_;
  const std::vector<std::string>& classes = classes_;
  nn::Module& model = model_;
  TESSERA_CHECK(data.size() > 0, "evaluate: the dataset is empty (0 examples)");
  TESSERA_CHECK(o.batch_size >= 1, "evaluate: batch size must be positive, got {}", o.batch_size);
  const auto k = static_cast<int64_t>(classes.size());
  Evaluation e;
  e.examples = data.size();
  e.classes = classes;
  e.confusion.assign(classes.size(), std::vector<int64_t>(classes.size(), 0));
  const std::vector<int64_t> labels = data.targets().to_vector<int64_t>();
  for (size_t i = 0; i < labels.size(); ++i) {
    TESSERA_CHECK(labels[i] >= 0 && labels[i] < k, "evaluate: example {} has label {}, but the model has {} classes (0 to {})",
                  i, labels[i], k, k - 1);
  }

  EvalMode mode(model);
  CompiledFunction* compiled = compiled_.get();
  data::DataLoader loader(std::make_shared<data::TensorDataset>(data), o.batch_size);
  Progress progress(o.label, data.size(), o.progress);
  double loss_sum = 0;
  int64_t correct = 0, done = 0;
  for (int64_t b = 0; b < loader.num_batches(); ++b) {
    const data::Batch batch = loader.batch(b);
    const Tensor x = Tensor::from_array(batch.inputs), y = Tensor::from_array(batch.targets);
    std::vector<Tensor> out;
    if (compiled) {
      out = (*compiled)({x, y});
    } else {
      out = forward(model, x, y);
      tessera::eval(out);
    }
    TESSERA_CHECK(out[0].numel() == 1, "evaluate: the model's loss is not a scalar");
    // A GPU backend's results live on the device.
    auto on_host = [](const Array& a) { return a.on_host() ? a : a.to(host_device()); };
    loss_sum += on_host(out[0].array()).to_vector<double>()[0];
    const std::vector<int64_t> predicted = on_host(out[1].array()).to_vector<int64_t>();
    for (size_t i = 0; i < predicted.size(); ++i) {
      const int64_t truth = labels[static_cast<size_t>(done) + i];
      const int64_t guess = predicted[i];
      TESSERA_CHECK(guess >= 0 && guess < k, "evaluate: the model predicted class {} but {} classes were given", guess, k);
      ++e.confusion[static_cast<size_t>(truth)][static_cast<size_t>(guess)];
      correct += guess == truth;
    }
    done += static_cast<int64_t>(predicted.size());
    progress.update(static_cast<int64_t>(predicted.size()), fmt::format("accuracy {:.2f}%", 100.0 * correct / done));
  }
  progress.finish(fmt::format("accuracy {:.2f}%", 100.0 * correct / done));
  e.mean_loss = loss_sum / static_cast<double>(e.examples);
  e.accuracy = static_cast<double>(correct) / static_cast<double>(e.examples);
  e.compiled_graphs = compiled ? compiled->cache_size() : 0;
  return e;
}

std::string evaluation_text(const Evaluation& e) {
  std::string out = fmt::format("{} examples: accuracy {:.2f}%, mean loss {:.4f}\n\n", e.examples, e.accuracy * 100,
                                e.mean_loss);
  size_t width = 5;
  for (const std::string& c : e.classes) width = std::max(width, c.size());
  out += fmt::format("{:<{}}  {:>9}  {:>6}  {:>6}  {:>7}\n", "class", width, "precision", "recall", "f1", "support");
  for (const ClassFigures& f : e.per_class()) {
    out += fmt::format("{:<{}}  {:>9.4f}  {:>6.4f}  {:>6.4f}  {:>7}\n", f.name, width, f.precision, f.recall, f.f1,
                       f.support);
  }
  // Columns are numbered: class names are often too long to head a column.
  out += "\nconfusion matrix (rows: true class, columns: predicted class by number)\n";
  size_t cell = 3;
  for (const auto& row : e.confusion) {
    for (int64_t v : row) cell = std::max(cell, std::to_string(v).size());
  }
  out += fmt::format("{:<{}}    ", "", width + 4);
  for (size_t p = 0; p < e.classes.size(); ++p) out += fmt::format(" {:>{}}", p, cell);
  out += "\n";
  for (size_t t = 0; t < e.classes.size(); ++t) {
    out += fmt::format("{:>2}  {:<{}}  ", t, e.classes[t], width + 2);
    for (int64_t v : e.confusion[t]) out += fmt::format(" {:>{}}", v, cell);
    out += "\n";
  }
  return out;
}

std::string evaluation_json(const Evaluation& e) {
  nlohmann::json j;
  j["examples"] = e.examples;
  j["accuracy"] = e.accuracy;
  j["mean_loss"] = e.mean_loss;
  j["classes"] = e.classes;
  j["confusion"] = e.confusion;
  nlohmann::json per = nlohmann::json::array();
  for (const ClassFigures& f : e.per_class()) {
    per.push_back({{"class", f.name}, {"precision", f.precision}, {"recall", f.recall}, {"f1", f.f1},
                   {"support", f.support}});
  }
  j["per_class"] = per;
  return j.dump();
}

}  // namespace tessera::train
