#include "tessera/backends/common/device_graph.h"

#include "tessera/passes/pass.h"

namespace tessera::backends::common {

DeviceGraph prepare_device_graph(const Backend& backend, const ir::Graph& graph) {
  DeviceGraph d{passes::default_pipeline().run(graph), {}, {}};
  for (const ir::NodePtr& n : d.optimized.nodes()) {
    if (!backend.supports(*n)) {
      d.optimized = graph;
      break;
    }
  }
  for (const ir::NodePtr& n : graph.nodes()) {
    if (n->op_name() != "constant") continue;
    d.original.emplace(n.get(), static_cast<int32_t>(d.constants.size()));
    d.constants.push_back(n.get());
  }
  return d;
}

}  // namespace tessera::backends::common
