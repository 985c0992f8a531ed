#pragma once
// Function transforms over tensors: grad / value_and_grad (reverse mode, any order), and compile,
// which traces a function once per input signature into an ir::Graph and reuses what it built.
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/api/tensor.h"
#include "tessera/backends/backend.h"

namespace tessera {

// A function of tensors returning one tensor: what grad() and value_and_grad() differentiate (its
// result must be a one-element floating-point tensor, a loss).
using ScalarFn = std::function<Tensor(const std::vector<Tensor>&)>;
// A function of tensors returning several: what compile() and trace() take, and what grad() returns.
using MultiFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Gradients of a scalar-valued function with respect to the arguments listed in `argnums` (all
// arguments when empty). The result is lazy, differentiable again, and evaluated on demand.
MultiFn grad(ScalarFn fn, std::vector<size_t> argnums = {});
// Returns {value, gradients...}.
MultiFn value_and_grad(ScalarFn fn, std::vector<size_t> argnums = {});

// Blocks gradients: the value passes through, its cotangent is zero.
Tensor stop_gradient(const Tensor& x);

// Traces `fn` into a graph for each distinct input signature (dtypes and shapes), compiles it on a
// backend (default_backend() unless one is given) and runs it. Tensors the function captures from outside
// whose data can change — parameters and buffers of modules (updated in place by optimisers and
// load_state_dict), tensors that require gradients, and leaves whose memory is shared with an Array the
// caller still holds — are bound as extra graph inputs and read at every call, so a compiled model(x)
// sees every optimiser step; only true constants fold into the graph.
class CompiledFunction {
 public:
  explicit CompiledFunction(MultiFn fn, backends::Backend* backend = nullptr);
  // Runs the executable for the arguments' types (tracing and compiling on the first call with them).
  // The results are evaluated leaves without history: backward() does not reach through a compiled call
  // (compile a function that returns the gradients instead, e.g. compile(grad(f))).
  std::vector<Tensor> operator()(const std::vector<Tensor>& args);
  // The graph traced for these argument types (tracing it now if needed). Its inputs are the
  // arguments followed by the captured tensors that are read at every call.
  const ir::Graph& graph_for(const std::vector<ir::TensorType>& types);
  // How many captured tensors the graph for these types reads at every call.
  size_t captured_count(const std::vector<ir::TensorType>& types);
  size_t cache_size() const { return cache_.size(); }  // how many signatures have an executable
  size_t trace_count() const { return traces_; }       // how many times `fn` has been traced (once per signature)

 private:
  using Signature = std::vector<std::pair<DType, Shape>>;
  struct Entry {
    std::unique_ptr<backends::Executable> executable;
    std::vector<ir::NodePtr> captured;  // leaves read at every call, after the arguments
  };
  Entry& entry_for(const std::vector<ir::TensorType>& types);

  MultiFn fn_;
  backends::Backend* backend_;
  std::map<Signature, Entry> cache_;
  size_t traces_ = 0;
  // The executable of the last call and its argument types: a steady-state call with the same
  // types skips building and looking up a signature (executables live as long as cache_).
  Entry* last_ = nullptr;
  std::vector<ir::TensorType> last_types_;
  std::vector<Array> data_;  // the call's input arrays, reused
};

// PyTorch's torch.compile / JAX's jit: wraps `fn` in a CompiledFunction (nothing is traced until the
// first call). `backend` must outlive the result; null means default_backend().
CompiledFunction compile(MultiFn fn, backends::Backend* backend = nullptr);

// Traces `fn` on placeholders of the given types into a graph without running it.
ir::Graph trace(const MultiFn& fn, const std::vector<ir::TensorType>& input_types,
                const std::vector<std::string>& input_names = {});

}  // namespace tessera
