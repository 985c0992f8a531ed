// dce: keeps only what the outputs need. A Graph already holds only the nodes its outputs reach
// (Graph::build walks back from them), so whole dead nodes vanish whenever a pass rebuilds the graph;
// what remains for this pass is dead *outputs* of multi-output nodes: a split of which only one piece
// is used becomes a slice of that piece.
#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

namespace {

using detail::Rewriter;

std::optional<std::vector<ir::Value>> narrow_split(const Rewriter& rw, const ir::Node& node,
                                                   const std::vector<ir::Value>& inputs) {
  if (node.op_name() != "split" || node.num_outputs() < 2) return std::nullopt;
  int used = -1;
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (rw.original_uses(node, i) == 0) continue;
    if (used >= 0) return std::nullopt;  // two pieces live: the split stays
    used = i;
  }
  if (used < 0) return std::nullopt;
  const std::vector<int64_t>& sizes = node.attrs().get_ints("sizes");
  const int64_t axis = node.attrs().get_int("axis");
  int64_t start = 0;
  for (int i = 0; i < used; ++i) start += sizes[static_cast<size_t>(i)];
  const ir::Value piece = ir::make_node1(
      "slice", {inputs[0]},
      ir::Attrs{
          {"axis", axis}, {"start", start}, {"stop", start + sizes[static_cast<size_t>(used)]}, {"step", int64_t{1}}});
  if (piece.type() != node.output_types()[static_cast<size_t>(used)]) return std::nullopt;
  // The dead pieces keep their old values: nothing refers to them, so the rebuilt graph drops them.
  std::vector<ir::Value> outs;
  const std::vector<ir::Value> old = rw.keep(node, inputs);
  for (int i = 0; i < node.num_outputs(); ++i) outs.push_back(i == used ? piece : old[static_cast<size_t>(i)]);
  return outs;
}

}  // namespace

Pass dce() {
  return Pass{"dce", [](const ir::Graph& graph) {
                // No Graph holds an unreachable node (Graph::build is the only way to make one, and it
                // collects exactly what the outputs reach), so there is nothing else to prune.
                Rewriter rw(graph, "dce");
                return rw.run([&](const ir::Node& node, const std::vector<ir::Value>& inputs) {
                  return narrow_split(rw, node, inputs);
                });
              }};
}

}  // namespace tessera::passes
