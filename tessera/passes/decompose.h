#pragma once
// decompose_where: replaces every node that `unsupported` rejects, and whose op declares a
// decomposition, by that decomposition (applied again to what it produces, to a bounded depth). A
// backend runs it before the graph splitter, so ops it lacks but can build from simpler ones stay on
// it instead of going to another device; the StableHLO exporter decomposes the same way.
// Nodes over empty tensors are left whole: their decomposition may not build (max has no value over
// an empty axis).
#include <functional>

#include "tessera/ir/graph.h"

namespace tessera::passes {

// Throws naming the op when a decomposition reproduces the op itself or nests deeper than 16 levels.
ir::Graph decompose_where(const ir::Graph& graph, const std::function<bool(const ir::Node&)>& unsupported);

}  // namespace tessera::passes
