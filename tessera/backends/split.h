#pragma once
// The graph splitter: runs a graph on a primary backend, giving each node the primary cannot run
// (supports(node) is false, even after decompose_where) to a fallback backend — the CPU for a GPU. The
// graph is cut into segments of consecutive nodes (in topological order) that run on one backend; each
// segment is compiled whole on its backend, and values that cross from one segment to another are
// copied between their devices. When the primary runs every node, the result is simply the primary's
// own executable.
#include <memory>
#include <vector>

#include "tessera/backends/backend.h"

namespace tessera::backends {

struct SplitPlan {
  struct Segment {
    Backend* backend = nullptr;
    std::vector<ir::NodePtr> nodes;
  };
  ir::Graph graph;  // after decomposing what the primary lacks
  std::vector<Segment> segments;
};

// Which backend runs what. Throws naming the node when neither backend supports it.
SplitPlan plan_split(const ir::Graph& graph, Backend& primary, Backend& fallback);

std::unique_ptr<Executable> compile_split(const ir::Graph& graph, Backend& primary, Backend& fallback,
                                          const CompileSpec& spec = {});

}  // namespace tessera::backends
