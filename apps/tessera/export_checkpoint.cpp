#include "export_checkpoint.h"

#include <fmt/format.h>

#include "tessera/core/parse_int.h"
#include "tessera/io/safetensors.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/model_spec.h"

namespace tessera::cli {

std::string checkpoint_model(const std::string& checkpoint) {
  return train::spec_from_metadata(checkpoint, train::read_checkpoint_metadata(checkpoint)).model;
}

void use_checkpoint_weights(io::stablehlo::Program& program, const std::string& checkpoint, bool train_step) {
  const std::map<std::string, std::string> meta = train::read_checkpoint_metadata(checkpoint);
  const train::ModelSpec spec = train::spec_from_metadata(checkpoint, meta);
  const train::ModelSpec fashion = train::fashion_mnist_spec(spec.model);
  // The exported programs are built for Fashion-MNIST's shapes (io/stablehlo/programs.h).
  TESSERA_CHECK(spec.input == fashion.input && spec.classes.size() == fashion.classes.size(),
                "export: checkpoint {} holds a {} for examples of shape {} and {} classes; export builds the {} for "
                "1x28x28 images and 10 classes",
                checkpoint, spec.model, shape_str(spec.input), spec.classes.size(), spec.model);
  if (train_step) {
    auto opt = meta.find("optim.optimizer");
    TESSERA_CHECK(opt != meta.end() && opt->second == "adam",
                  "export: --train-step exports Adam's step, but checkpoint {} was trained with '{}'; export its "
                  "forward pass (without --train-step) instead",
                  checkpoint, opt == meta.end() ? std::string("no optimiser") : opt->second);
  }
  const io::SafetensorsFile file = io::load_safetensors_with_metadata(checkpoint);
  for (size_t i = 0; i < program.input_names.size(); ++i) {
    const std::string& name = program.input_names[i];
    Array& slot = program.inputs[i];
    if (name == "x" || name == "y") continue;  // example data
    if (name == "step") {
      auto step = meta.find("optim.step");
      TESSERA_CHECK(step != meta.end(), "export: checkpoint {} has no metadata 'optim.step' (Adam's step count)",
                    checkpoint);
      const int64_t n = parse_int_or_fail(step->second, 0, int64_t{1} << 40,
                                          fmt::format("checkpoint {}: metadata 'optim.step'", checkpoint));
      slot = Array::scalar(static_cast<double>(n), slot.dtype());
      continue;
    }
    const bool moment = name.ends_with(".exp_avg") || name.ends_with(".exp_avg_sq");
    const std::string key = (moment ? "optim." : "model.") + name;
    auto it = file.tensors.find(key);
    TESSERA_CHECK(it != file.tensors.end(), "export: checkpoint {} has no tensor '{}' (expected {} {} for the {})",
                  checkpoint, key, dtype_name(slot.dtype()), shape_str(slot.shape()), spec.model);
    TESSERA_CHECK(it->second.shape() == slot.shape(),
                  "export: checkpoint {}: tensor '{}' has shape {}, expected {} for the {}", checkpoint, key,
                  shape_str(it->second.shape()), shape_str(slot.shape()), spec.model);
    TESSERA_CHECK(is_floating(it->second.dtype()), "export: checkpoint {}: tensor '{}' is {}, expected a floating dtype",
                  checkpoint, key, dtype_name(it->second.dtype()));
    slot = it->second.astype(slot.dtype()).contiguous();
  }
}

}  // namespace tessera::cli
