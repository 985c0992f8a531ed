#pragma once
// The backend contract (after ggml's): a backend receives a whole graph, compiles it into an
// Executable and runs it on arrays. Handing over the whole graph lets a backend fuse, plan memory or
// capture as it likes; `supports` lets a caller fall back (to a decomposition or another backend).
#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"

namespace tessera::backends {

class Executable {
 public:
  virtual ~Executable() = default;
  virtual std::vector<Array> run(const std::vector<Array>& inputs) = 0;
  // Runs writing into caller-owned output arrays of the graph's output types (contiguous). Backends
  // that plan memory override it so a steady-state call allocates nothing; the default copies.
  virtual void run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs);
  virtual const ir::Graph& graph() const = 0;
  // Bytes of intermediate memory the executable needs while running (known before it runs); 0 when
  // the backend does not plan memory.
  virtual int64_t peak_bytes() const { return 0; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual bool supports(const ir::OpDef& op) const = 0;
  virtual std::unique_ptr<Executable> compile(const ir::Graph& graph) = 0;
};

// The reference backend: runs every op with its OpDef's plain implementation. It is the oracle that
// every other backend is tested against.
Backend& reference_backend();

// Backends by name ("reference", "cpu", ...); throws listing the known names.
Backend& backend_by_name(const std::string& name);
std::vector<std::string> backend_names();
// The backend that eager evaluation (Tensor::eval) and compile() use when none is given:
// $TESSERA_BACKEND if set, else "cpu" (the reference backend is the oracle, chosen by name).
Backend& default_backend();
void set_default_backend(Backend& backend);

// Checks that run-time arrays match the graph's declared input types; throws naming the input.
void check_inputs(const ir::Graph& graph, const std::vector<Array>& inputs);

}  // namespace tessera::backends
