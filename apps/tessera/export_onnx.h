#pragma once
// `tessera export onnx`: a built-in model's forward pass or training step (seeded weights, or a
// checkpoint's), or an IR text file, as an ONNX model with example inputs and Tessera's outputs.
#include "command.h"

namespace tessera::cli {

// Registers `onnx` under the export command; run() is called when it was chosen.
Command add_export_onnx_subcommand(CLI::App& export_app);

}  // namespace tessera::cli
