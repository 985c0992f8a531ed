#pragma once
// Optimiser updates as ops: one node updates a parameter and its state, so that a backend can run
// every parameter's update in one fused pass (the CPU backend batches all adam_update nodes of a graph).
#include "tessera/api/tensor.h"

namespace tessera::ops {

// The hyperparameters of one fused Adam/AdamW update.
struct AdamUpdateOptions {
  // Decay rates of the first and second moment averages, the denominator's epsilon, and the weight decay.
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  bool decoupled = false;  // AdamW: weight decay applied to the parameter, not added to the gradient
};

// PyTorch's Adam / AdamW step for one parameter: returns {new param, new exp_avg, new exp_avg_sq}.
// lr and step (the step being made, from 1) are f64 scalars so one graph serves every step.
// Computed in f64 per element and rounded once to the parameter's dtype.
std::vector<Tensor> adam_update(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                                const Tensor& exp_avg_sq, const Tensor& lr, const Tensor& step,
                                const AdamUpdateOptions& options = {});

}  // namespace tessera::ops
