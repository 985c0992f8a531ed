#pragma once
// Whole training steps written with ops, as the compiled-training path builds them: forward, loss,
// tessera::grad, and the Adam update of every parameter and its two moments (the fused adam_update
// op, or its decomposition into elementwise ops). Inputs: x, y, then (param, m, v) per parameter,
// then the f64 scalars lr and step; outputs: the loss, then (param', m', v') per parameter.
#include <vector>

#include "cpu_test_util.h"

namespace tessera::test {

struct StepGraph {
  ir::Graph graph;
  std::vector<Array> inputs;  // a deterministic set of inputs (random data, small weights, zero moments)
};

// MLP with the given layer widths (e.g. 784-1024-512-256-10), ReLU between layers.
StepGraph mlp_train_step(int64_t batch, const std::vector<int64_t>& widths, bool fused_adam = true);
// The CNN of issue 3 on [batch, 1, 28, 28] inputs.
StepGraph cnn_train_step(int64_t batch, bool fused_adam = true);

}  // namespace tessera::test
