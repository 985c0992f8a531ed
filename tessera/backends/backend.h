#pragma once
// The backend contract, after ggml's registry -> device -> buffer layering. A registry lists the
// backends compiled in and probes which are available on this machine; a backend has devices
// (core/device.h) and receives a whole graph, which it compiles into an Executable: it may fuse, plan
// memory or capture as it likes. Executables run on arrays that live on their device (inputs elsewhere
// are copied in; host arrays are the convenience case) and may declare that an output is written into
// an input's memory, so state — a KV cache, optimiser moments, parameters — is updated in place across
// runs. `supports(node)` answers per node (dtype, shape, attributes): a graph splitter (split.h) gives
// what one backend lacks to another, the CPU as the fallback, never a crash.
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/device.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"

namespace tessera::backends {

// Output `output` of the graph is written into the memory of input `input` (same type) at the end of a
// run; the caller passes that input array as the output too (run_into), or run() returns the input.
struct Alias {
  int output = 0;  // index into the graph's outputs
  int input = 0;   // index into the graph's inputs, whose memory receives that output
  bool operator==(const Alias& o) const { return output == o.output && input == o.input; }  // same pair
};

// What a compile may assume beyond the graph: outputs written into inputs (aliases).
struct CompileSpec {
  std::vector<Alias> aliases;  // checked by check_aliases(); empty: every output is a fresh array
};

// A compiled graph, ready to run on its backend's device.
class Executable {
 public:
  virtual ~Executable() = default;
  // Inputs may live on any device (those elsewhere are copied to this executable's device); outputs are
  // fresh arrays on its device, or, for aliased outputs, the input arrays themselves, updated.
  virtual std::vector<Array> run(const std::vector<Array>& inputs) = 0;
  // Runs writing into caller-owned output arrays of the graph's output types (contiguous, on this
  // executable's device). Backends that plan memory override it so a steady-state call allocates
  // nothing; the default copies. For an aliased pair, outputs[k] is inputs[j].
  virtual void run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs);
  virtual const ir::Graph& graph() const = 0;  // the graph as compiled (after the backend's passes)
  // Bytes of intermediate memory the executable needs while running (known before it runs); 0 when
  // the backend does not plan memory.
  virtual int64_t peak_bytes() const { return 0; }
  virtual Device& device() const { return host_device(); }  // where inputs are read and outputs live
  const std::vector<Alias>& aliases() const { return aliases_; }  // the CompileSpec's aliases it honours

 protected:
  std::vector<Alias> aliases_;  // set by the backend's compile() from the CompileSpec
};

// Compiles whole graphs for one kind of device (reference, cpu, cuda, ...).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // the registry name: "reference", "cpu", "cuda", ...
  // Whether the backend can run here (its driver, toolkit and a device are present); when not,
  // status() says why in one line. Backends that are not available refuse to compile.
  virtual bool available() const { return true; }
  virtual std::string status() const;  // "available: ..." or why not
  virtual std::vector<Device*> devices() { return {&host_device()}; }  // its devices, owned by the backend
  virtual Device& device() { return *devices().front(); }  // the device it compiles for (the first)
  // Whether the backend can run this node as it is (its op, dtypes, shapes, attributes).
  virtual bool supports(const ir::Node& node) const = 0;
  // Compiles the whole graph into an executable for device().
  // Throws tessera::Error when the backend is not available or the spec's aliases do not fit the graph.
  virtual std::unique_ptr<Executable> compile(const ir::Graph& graph, const CompileSpec& spec) = 0;
  std::unique_ptr<Executable> compile(const ir::Graph& graph) { return compile(graph, CompileSpec{}); }  // no aliases
};

// The reference backend: runs every op with its OpDef's plain implementation. It is the oracle that
// every other backend is tested against.
Backend& reference_backend();

// Backends by name ("reference", "cpu", "cuda", ...): every backend compiled in, available or not.
// backend_by_name throws listing the known names, and for a backend that is not available here, why.
Backend& backend_by_name(const std::string& name);
Backend* find_backend(const std::string& name);  // null if no backend has that name
std::vector<std::string> backend_names();  // every backend compiled in, available here or not
// The backend that eager evaluation (Tensor::eval) and compile() use when none is given:
// $TESSERA_BACKEND if set, else "cpu" (the reference backend is the oracle, chosen by name).
Backend& default_backend();
void set_default_backend(Backend& backend);  // replaces default_backend() process-wide; `backend` must outlive its use

// Checks that run-time arrays match the graph's declared input types; throws naming the input.
void check_inputs(const ir::Graph& graph, const std::vector<Array>& inputs);
// Checks a CompileSpec's aliases against the graph: indices in range, equal types, each input and each
// output at most once; throws naming the pair.
void check_aliases(const ir::Graph& graph, const std::vector<Alias>& aliases);

}  // namespace tessera::backends
