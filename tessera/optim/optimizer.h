#pragma once
// Optimisers update parameters in place: each step builds the update as ordinary ops, evaluates all
// new parameters, optimiser state (and the model's buffers, when built from a module) in one graph,
// then swaps in fresh leaves — so no history accumulates from step to step.
#include <map>
#include <string>
#include <vector>

#include "tessera/api/tensor.h"
#include "tessera/nn/module.h"

namespace tessera::train {
class CompiledTrainStep;
}

namespace tessera::optim {

// The base of every optimiser: its parameters, learning rate, step count and per-parameter state.
class Optimizer {
 public:
  Optimizer(std::vector<Tensor*> params, double lr);
  Optimizer(nn::Module& model, double lr);  // parameters by name; buffers are materialised on step
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Uses the gradients accumulated by Tensor::backward(); parameters without a gradient are skipped.
  void step();
  // Functional form: one gradient per parameter, in parameter order (undefined = skip).
  void step(const std::vector<Tensor>& grads);
  void zero_grad();  // drops every parameter's accumulated gradient (Tensor::zero_grad)

  double lr() const { return lr_; }  // the learning rate the next step uses
  void set_lr(double lr);  // lr must be non-negative (schedules call this every step)
  int64_t step_count() const { return steps_; }  // steps completed (0 before the first)
  // Step numbers reach the update as f64 (step_scalar), exact up to 2^53.
  static constexpr int64_t kMaxStepCount = int64_t{1} << 53;
  const std::vector<Tensor*>& params() const { return params_; }  // not owned: they must outlive the optimiser
  // The optimiser's name as checkpoints record it ("sgd", "adam", "adamw", "radam"); load_state_dict
  // refuses state saved by another.
  virtual std::string name() const = 0;

  // Optimiser state for checkpoints: "<param name>.<slot>" -> array, plus "step" in the metadata map.
  StateDict state_dict() const;
  // The metadata saved with state_dict(): "optimizer" (name()), "step" (step_count()) and "lr".
  std::map<std::string, std::string> state_metadata() const;
  // Restores state saved by state_dict (errors name the missing or mis-shaped entry). Everything is
  // validated first: a failed load leaves the optimiser as it was. The step count must be a plain
  // decimal integer in [0, kMaxStepCount] (parse_int_strict).
  void load_state_dict(const StateDict& state, const std::map<std::string, std::string>& metadata);

 protected:
  // Returns the new value of parameter i given its gradient; may read/write state(i, "slot").
  virtual Tensor update(size_t i, const Tensor& param, const Tensor& grad) = 0;
  // The state slots this optimiser keeps per parameter (for checkpoint validation).
  virtual std::vector<std::string> slots() const = 0;
  // Parameter i's state tensor in `slot` (created undefined on first use).
  Tensor& state(size_t i, const std::string& slot) { return state_[i][slot]; }
  // Whether parameter i has state in `slot` yet (false before its first update).
  bool has_state(size_t i, const std::string& slot) const { return state_[i].count(slot) != 0; }
  // The learning rate and the number of the step being made (steps_ + 1) as f64 scalars: constants
  // when stepping eagerly, placeholders while a whole training step is traced, so that one compiled
  // graph serves every step. scalar_as casts such a scalar expression to a parameter's dtype.
  Tensor lr_scalar() const;
  Tensor step_scalar() const;  // see lr_scalar
  // `scalar` cast to the dtype of `like` (see above).
  static Tensor scalar_as(const Tensor& scalar, const Tensor& like);
  int64_t steps_ = 0;  // completed steps; update() sees the step being made as steps_ + 1

 private:
  friend class train::CompiledTrainStep;  // traces update() with placeholder state and scalars
  Tensor traced_lr_, traced_step_;
  std::vector<Tensor*> params_;
  std::vector<std::string> names_;
  std::vector<std::map<std::string, Tensor>> state_;
  nn::Module* module_ = nullptr;
  double lr_;
};

// Scales the gradients so their global L2 norm is at most max_norm; returns the norm before scaling.
double clip_grad_norm(std::vector<Tensor>& grads, double max_norm);
// The same for the .grad of parameters (after backward()).
double clip_grad_norm(const std::vector<Tensor*>& params, double max_norm);

}  // namespace tessera::optim
