#include "tessera/train/model_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "tessera/core/parse_int.h"
#include "tessera/data/fashion_mnist.h"
#include "tessera/models/vision.h"
#include "tessera/train/limits.h"
#include <algorithm>

namespace tessera::train {

namespace {
// Far beyond any image or table this trains on; a bound so that a garbage entry cannot ask for terabytes.
constexpr int64_t kMaxInputElements = int64_t{1} << 28;
}  // namespace

ModelSpec fashion_mnist_spec(const std::string& model) {
  ModelSpec s;
  s.model = model;
  s.classes.assign(data::kFashionMnistClasses.begin(), data::kFashionMnistClasses.end());
  return s;
}

std::shared_ptr<nn::Module> build_model(const ModelSpec& spec, ops::Generator& gen) {
  TESSERA_CHECK(spec.classes.size() >= 2, "model {}: a classifier needs at least 2 classes, got {}", spec.model,
                spec.classes.size());
  const auto classes = static_cast<int64_t>(spec.classes.size());
  if (spec.model == "cnn") {
    TESSERA_CHECK(spec.input == Shape({1, 28, 28}),
                  "model cnn takes 1x28x28 images (one channel, 28 by 28 pixels), but the examples are {}; use "
                  "--model mlp, which takes any shape",
                  shape_str(spec.input));
    return models::cnn(gen, classes);
  }
  TESSERA_CHECK(spec.model == "mlp", "unknown model '{}' (expected mlp or cnn)", spec.model);
  int64_t features = 1;
  for (int64_t d : spec.input) features *= d;
  return models::mlp(gen, features, classes);
}

std::map<std::string, std::string> spec_metadata(const ModelSpec& spec) {
  return {{"model", spec.model},
          {"input_shape", fmt::format("{}", fmt::join(spec.input, ","))},
          {"classes", nlohmann::json(spec.classes).dump()}};
}

ModelSpec spec_from_metadata(const std::string& checkpoint, const std::map<std::string, std::string>& metadata) {
  auto model = metadata.find("model");
  TESSERA_CHECK(model != metadata.end(), "checkpoint {}: metadata has no 'model' entry (expected mlp or cnn)",
                checkpoint);
  TESSERA_CHECK(model->second == "mlp" || model->second == "cnn",
                "checkpoint {}: metadata 'model' is '{}', expected mlp or cnn", checkpoint, model->second);
  ModelSpec spec = fashion_mnist_spec(model->second);
  if (auto shape = metadata.find("input_shape"); shape != metadata.end()) {
    spec.input.clear();
    int64_t elements = 1;
    const std::string& text = shape->second;
    for (size_t at = 0; at <= text.size();) {
      const size_t comma = std::min(text.find(',', at), text.size());
      const int64_t d = parse_int_or_fail(std::string_view(text).substr(at, comma - at), 1, kMaxInputElements,
                                          fmt::format("checkpoint {}: metadata 'input_shape' ('{}')", checkpoint, text));
      elements *= d;
      TESSERA_CHECK(elements <= kMaxInputElements, "checkpoint {}: metadata 'input_shape' {} has more than {} elements",
                    checkpoint, text, kMaxInputElements);
      spec.input.push_back(d);
      at = comma + 1;
    }
  }
  if (auto classes = metadata.find("classes"); classes != metadata.end()) {
    const nlohmann::json names = nlohmann::json::parse(classes->second, nullptr, /*allow_exceptions=*/false);
    TESSERA_CHECK(names.is_array() && names.size() >= 2 && names.size() <= kMaxClasses,
                  "checkpoint {}: metadata 'classes' is not a JSON list of 2 to {} class names", checkpoint,
                  kMaxClasses);
    spec.classes.clear();
    for (const auto& n : names) {
      TESSERA_CHECK(n.is_string(), "checkpoint {}: metadata 'classes' holds {}, expected class names (strings)",
                    checkpoint, n.dump());
      spec.classes.push_back(n.get<std::string>());
    }
  }
  return spec;
}

}  // namespace tessera::train
