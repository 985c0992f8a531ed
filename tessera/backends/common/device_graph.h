#pragma once
// What every device backend's compile() does to a graph before its own lowering: the default pass
// pipeline (kept only when the backend supports every node of the result: a fusion may make an op it
// lacks) and the graph's constants numbered in order, as the shared lowering binds them.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/ir/graph.h"

namespace tessera::backends::common {

struct DeviceGraph {
  ir::Graph optimized;                                    // what the lowering compiles
  std::vector<const ir::Node*> constants;                 // the given graph's constants, in order
  std::unordered_map<const ir::Node*, int32_t> original;  // each of them to its number
};

DeviceGraph prepare_device_graph(const Backend& backend, const ir::Graph& graph);

}  // namespace tessera::backends::common
