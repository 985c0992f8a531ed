#pragma once
// A whole training step — forward, loss, gradients (autodiff), gradient clipping and the optimiser
// update — traced once into one graph and compiled, then run with no graph building per step.
// Parameters, optimiser state and buffers live in two sets of arrays that swap roles every step
// (double buffering), so a steady-state step allocates nothing beyond the batch itself.
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "tessera/api/tensor.h"
#include "tessera/backends/backend.h"
#include "tessera/nn/module.h"
#include "tessera/optim/optimizer.h"

namespace tessera::train {

// Builds the scalar loss of the model on a batch (x, y).
using LossFn = std::function<Tensor(nn::Module& model, const Tensor& x, const Tensor& y)>;

// One compiled graph per batch type for a whole training step.
class CompiledTrainStep {
 public:
  // clip_norm > 0 clips the gradients to that global L2 norm inside the graph.
  CompiledTrainStep(nn::Module& model, optim::Optimizer& optimizer, LossFn loss, double clip_norm = 0.0,
                    backends::Backend* backend = nullptr /* default_backend() */);

  // One step on a batch; returns the loss. Uses the optimiser's current lr and step count and advances
  // the step count. A new batch type traces and compiles another graph (e.g. a smaller last batch).
  // While the optimiser has no state yet (its very first step) the step runs eagerly.
  double step(const Array& x, const Array& y);
  // The same step without reading the loss back: on a GPU the call returns once the work is queued.
  // Returns false for the eager first step (its loss is what step() would return).
  bool advance(const Array& x, const Array& y);
  // The loss of the most recent compiled step, on the backend's device.
  const Array& last_loss_array() const;

  // Writes the current parameters, buffers and optimiser state back into the model and optimiser
  // (as fresh arrays). Call it before reading the model (evaluation, checkpoints).
  void sync();

  // The graph one step runs for batches of these types (for inspection, export and benchmarks);
  // needs the optimiser's state to exist, i.e. at least one step made.
  ir::Graph step_graph(const ir::TensorType& x_type, const ir::TensorType& y_type);

  size_t compiled_graphs() const { return plans_.size(); }  // step graphs compiled so far, one per batch shape
  // The executable and graph of the most recent step (null before the first compiled step).
  const backends::Executable* last_executable() const { return last_; }

 private:
  struct Plan {
    std::unique_ptr<backends::Executable> executable;
  };
  Plan& plan_for(const Array& x, const Array& y);
  ir::Graph trace(const ir::TensorType& x_type, const ir::TensorType& y_type);
  void adopt_state();         // copies model/optimiser tensors into the live arrays
  bool state_ready() const;   // every optimiser slot of every parameter exists

  nn::Module& model_;
  optim::Optimizer& optimizer_;
  LossFn loss_;
  double clip_norm_;
  backends::Backend& backend_;
  std::vector<std::pair<std::string, Tensor*>> params_, buffers_;
  std::vector<std::pair<size_t, std::string>> slots_;  // (parameter index, slot) in graph order
  std::vector<Array> live_, spare_;                    // params, slots, buffers
  std::vector<Array> inputs_, outputs_;                // reused argument vectors
  Array lr_, t_;                                       // f64 scalars, rewritten every step
  bool adopted_ = false;
  bool dirty_ = false;  // live_ holds values the model/optimiser have not seen yet
  double eager_loss_ = 0;
  std::map<std::vector<int64_t>, Plan> plans_;
  backends::Executable* last_ = nullptr;
};

}  // namespace tessera::train
