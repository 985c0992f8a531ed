#pragma once
// nn::Module: named parameters and buffers, nested submodules, train/eval mode. Parameters are
// Tensor members of the concrete module, registered by pointer, so the module reads them as plain
// fields while optimisers and checkpoints reach them by name. Modules are not copyable (the registry
// holds pointers to their members); share them through std::shared_ptr.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/api/tensor.h"
#include "tessera/core/state_dict.h"
#include "tessera/nn/incompatible_keys.h"

namespace tessera::nn {

// The base of every layer and model: parameters, buffers and children by name.
class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Single-input modules override forward; others offer their own call signatures.
  virtual Tensor forward(const Tensor& x);
  // Calls forward inside an origin scope naming this module, so that errors about the nodes it builds
  // point back to it (ir/origin.h).
  Tensor operator()(const Tensor& x);
  // The type with its sizes, as summary() prints it (e.g. "Linear(784, 128)").
  virtual std::string name() const { return "Module"; }  // the type with its sizes, as summary() prints it
  // "Linear 'fc1'": the module's type and the name its parent registered it under.
  std::string origin_label() const;

  // Recursively, with dotted names ("0.weight", "encoder.norm.bias") in registration order.
  std::vector<std::pair<std::string, Tensor*>> named_parameters();
  std::vector<std::pair<std::string, Tensor*>> named_buffers();         // saved and loaded, not trained
  std::vector<Tensor*> parameters();                                    // named_parameters() without names
  std::vector<std::pair<std::string, Module*>> named_children() const;  // direct submodules
  int64_t num_parameters();  // total element count

  void train(bool on = true);                     // training mode, recursively
  void eval() { train(false); }                   // inference mode
  bool is_training() const { return training_; }  // the mode train() / eval() set

  // Casts every floating parameter and buffer (dtype moves; the CPU is the only device for now).
  void to(DType dtype);
  // Marks every parameter as requiring gradients (set at registration; needed after manual swaps).
  void requires_grad(bool on = true);
  void zero_grad();  // clears every parameter's gradient

  // Parameters and buffers by dotted name, as concrete arrays (what io::save_safetensors takes).
  StateDict state_dict();
  // Loads arrays by name and returns the names that did not pair up, as PyTorch does. strict: any such
  // name is an error that lists them and says which prefix, if any, one side has and the other lacks.
  // Shape and dtype mismatches are errors in both modes, naming the tensor and both types. Everything
  // is checked first: a failed load leaves the module as it was.
  IncompatibleKeys load_state_dict(const StateDict& state, bool strict = true);

  // A readable tree: each submodule with its parameter shapes.
  std::string summary() const;

  // Makes every parameter and buffer slot (recursively) hold the leaf it was registered with again,
  // carrying its current value: a slot that now holds a computed tensor (BatchNorm's running statistics
  // after a training step, a value assigned by hand) is evaluated and written into that leaf in place.
  // Leaves keep their identity across updates, so compiled functions that captured them read the new
  // values (they are bound as inputs at every call). Optimisers and materialize() call this.
  void commit();

 protected:
  // Registers a member tensor; parameters become leaves that require gradients.
  void register_parameter(const std::string& name, Tensor* slot);
  void register_buffer(const std::string& name, Tensor* slot);  // state that is saved but not trained
  // Registers a child by name (its tensors become "<name>.<tensor>") and returns it.
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  void add_child(const std::string& name, std::shared_ptr<Module> module);  // register_module without the type

 private:
  void collect(const std::string& prefix, bool buffers, std::vector<std::pair<std::string, Tensor*>>& out);
  void commit_slot(Tensor* slot, bool parameter);
  void summarize(const std::string& prefix, int depth, std::string& out) const;

  std::vector<std::pair<std::string, Tensor*>> params_;
  std::vector<std::pair<std::string, Tensor*>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  std::string registered_name_;  // set by the parent's register_module
  std::map<const Tensor*, Tensor> homes_;  // per parameter/buffer slot, the leaf that keeps its identity
};

// Evaluates every parameter and buffer of `module` together and replaces each by a fresh leaf holding
// its value: this cuts the history that lazy updates (optimiser steps, running statistics) build up.
void materialize(Module& module);

}  // namespace tessera::nn
