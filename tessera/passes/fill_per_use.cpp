// fill_per_use: a `full` read by several nodes becomes one `full` per reader. Generated kernels hold a
// fill's value as a literal; one fill shared by two kernels was a kernel of its own that stored an array
// nobody read. A lowering pass (backends run it right before clustering, after CSE has merged fills).
#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

Pass fill_per_use() {
  return Pass{"fill_per_use", [](const ir::Graph& graph) {
                detail::Rewriter rw(graph, "fill_per_use");
                return rw.run([&](const ir::Node& node, const std::vector<ir::Value>& inputs)
                                  -> std::optional<std::vector<ir::Value>> {
                  std::vector<ir::Value> fresh = inputs;
                  bool changed = false;
                  for (ir::Value& in : fresh) {
                    const ir::Node* fill = rw.producer(in, "full");
                    if (fill == nullptr || rw.uses(in) < 2) continue;
                    in = ir::make_node1("full", {}, fill->attrs());
                    changed = true;
                  }
                  if (!changed) return std::nullopt;
                  return rw.keep(node, fresh);
                });
              }};
}

}  // namespace tessera::passes
