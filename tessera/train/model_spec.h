#pragma once
// What a classifier checkpoint needs to be rebuilt without its training data: the architecture, the
// shape of one input example and the classes. `tessera train` stores it in the checkpoint's metadata
// ("model", "input_shape" as "1,28,28", "classes" as a JSON list of names), `tessera eval` and
// `tessera export --checkpoint` read it back. Checkpoints written before it existed are Fashion-MNIST's.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/shape.h"
#include "tessera/nn/module.h"
#include "tessera/ops/random.h"

namespace tessera::train {

struct ModelSpec {
  std::string model = "mlp";                // mlp | cnn
  Shape input{1, 28, 28};                   // one example, without the batch axis
  std::vector<std::string> classes;         // label -> name; its size is the number of outputs
};

// Fashion-MNIST's spec for `model`.
ModelSpec fashion_mnist_spec(const std::string& model);
// The model, initialised from `gen` (the mlp flattens any input shape; the cnn takes 1x28x28 only and
// says so, naming the shape it got).
std::shared_ptr<nn::Module> build_model(const ModelSpec& spec, ops::Generator& gen);
// The metadata entries that record `spec`, and the spec a checkpoint's metadata records (errors name
// the checkpoint and the entry).
std::map<std::string, std::string> spec_metadata(const ModelSpec& spec);
ModelSpec spec_from_metadata(const std::string& checkpoint, const std::map<std::string, std::string>& metadata);

}  // namespace tessera::train
