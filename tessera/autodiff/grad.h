#pragma once
// Reverse-mode autodiff as a graph transform: the gradient is built from each op's VJP rule as new
// ordinary nodes, so it can itself be evaluated, compiled, exported or differentiated again.
#include <vector>

#include "tessera/ir/graph.h"

namespace tessera::autodiff {

// Cotangents of `wrt` given cotangents of `outputs` (same shapes as the outputs). A `wrt` value that
// does not influence the outputs gets zeros. Throws naming the op if a needed op has no gradient rule.
std::vector<ir::Value> vjp(const std::vector<ir::Value>& outputs, const std::vector<ir::Value>& cotangents,
                           const std::vector<ir::Value>& wrt);

// Graph -> graph: the returned graph has the same inputs, and outputs
// [the original outputs..., d(outputs[output])/d(inputs[i]) for i in wrt_inputs].
// The differentiated output must be a one-element floating tensor (a loss).
ir::Graph grad_graph(const ir::Graph& graph, size_t output, const std::vector<size_t>& wrt_inputs);

}  // namespace tessera::autodiff
