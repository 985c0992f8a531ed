#pragma once
// `tessera export ... --checkpoint C`: the exported program's parameters (and, for --train-step, Adam's
// moments and step count) become a training checkpoint's instead of freshly drawn ones.
#include <string>

#include "tessera/io/stablehlo/programs.h"

namespace tessera::cli {

// The model named in the checkpoint's metadata (mlp or cnn); errors name the file.
std::string checkpoint_model(const std::string& checkpoint);

// Replaces the program's example inputs by the checkpoint's tensors of the same names, checking each
// one's shape and dtype (errors name the file, the tensor and what was expected).
void use_checkpoint_weights(io::stablehlo::Program& program, const std::string& checkpoint, bool train_step);

}  // namespace tessera::cli
