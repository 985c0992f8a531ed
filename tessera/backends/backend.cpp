// What every backend shares from backend.h: the default status, the alias check and run_into. The
// table of backends by name is a layer above the backends (backend_registry.cpp).
#include "tessera/backends/backend.h"

#include "tessera/core/error.h"

namespace tessera::backends {

std::string Backend::status() const {
  return available() ? "available" : "not available";
}

void check_aliases(const ir::Graph& graph, const std::vector<Alias>& aliases) {
  std::vector<bool> output_used(graph.outputs().size(), false), input_used(graph.inputs().size(), false);
  for (const Alias& a : aliases) {
    TESSERA_CHECK(a.output >= 0 && static_cast<size_t>(a.output) < graph.outputs().size() && a.input >= 0 &&
                      static_cast<size_t>(a.input) < graph.inputs().size(),
                  "graph '{}': alias of output {} to input {} is out of range ({} outputs, {} inputs)", graph.name(),
                  a.output, a.input, graph.outputs().size(), graph.inputs().size());
    const ir::TensorType& out = graph.outputs()[static_cast<size_t>(a.output)].type();
    const ir::TensorType& in = graph.inputs()[static_cast<size_t>(a.input)].type();
    TESSERA_CHECK(out == in, "graph '{}': output {} ({}) cannot be written into input {} ({}): the types differ",
                  graph.name(), a.output, ir::type_str(out), a.input, ir::type_str(in));
    TESSERA_CHECK(!output_used[static_cast<size_t>(a.output)] && !input_used[static_cast<size_t>(a.input)],
                  "graph '{}': output {} or input {} is aliased twice", graph.name(), a.output, a.input);
    output_used[static_cast<size_t>(a.output)] = input_used[static_cast<size_t>(a.input)] = true;
  }
}

void Executable::run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  std::vector<Array> results = run(inputs);
  TESSERA_CHECK(outputs.size() == results.size(), "run_into: the graph has {} outputs but {} arrays were given",
                results.size(), outputs.size());
  for (size_t i = 0; i < results.size(); ++i) {
    TESSERA_CHECK(outputs[i].dtype() == results[i].dtype() && outputs[i].shape() == results[i].shape(),
                  "run_into: output {} must be {}{}, got {}{}", i, dtype_name(results[i].dtype()),
                  shape_str(results[i].shape()), dtype_name(outputs[i].dtype()), shape_str(outputs[i].shape()));
    outputs[i].copy_from(results[i]);
  }
}

}  // namespace tessera::backends
