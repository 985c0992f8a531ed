#pragma once
// Whole programs to export: the built-in models' forward pass, and a complete training step as one
// function (forward, gradients from autodiff, Adam update), traced into graphs with example inputs.
// `tessera export stablehlo --model ...` uses these; so do the XLA proof and the tests.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/io/stablehlo/export.h"
#include "tessera/ir/graph.h"

namespace tessera::io::stablehlo {

struct ProgramOptions {
  std::string model = "mlp";  // mlp, cnn, transformer
  int64_t batch_size = 8;
  bool train_step = false;
  uint64_t seed = 0;  // parameters and example inputs are drawn from it
};

struct Program {
  std::string name;                       // "mlp", "cnn_train_step", ...
  ir::Graph graph;                        // inputs named like the arguments below
  std::vector<std::string> input_names;   // parameter names ("0.weight"), optimiser state, "x", "y"
  std::vector<Array> inputs;              // example values, in graph-input order
  std::vector<std::string> output_names;  // "logits" / "loss", "new.0.weight", ...
};

std::vector<std::string> program_models();  // mlp, cnn, transformer

// The forward pass (parameters..., x) -> output, or with train_step the training step
//   (parameters..., exp_avg..., exp_avg_sq..., step, x, y) -> (loss, parameters'..., exp_avg'...,
//   exp_avg_sq'..., step + 1)
// updating with Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8) through the adam_update op, as optim::Adam
// does, with the number of completed steps a scalar argument so that one function serves every step
// (optim::Adam updates parameters in place, so it is not itself a pure function to trace). Arguments
// are 32-bit (class targets i32, the step count f32) so that runtimes without 64-bit defaults (jax
// without x64) take them as they are. The example inputs hold a warm optimiser state (10 steps done,
// moments drawn at plausible sizes) rather than zeros. The
// classifiers use cross-entropy; the transformer block (pre-norm: x + MHA(LN(x)), then + MLP(LN(.))
// with GELU) regresses a target of its own shape with mean squared error.
Program build_program(const ProgramOptions& options);

// The graph's outputs on the reference backend (Tessera's oracle), for comparison with other runtimes.
std::vector<Array> reference_outputs(const Program& program);

// The training step's Adam hyper-parameters (tessera::optim::AdamOptions' defaults).
struct AdamConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

}  // namespace tessera::io::stablehlo
