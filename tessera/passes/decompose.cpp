#include "tessera/passes/decompose.h"

#include "tessera/ir/op_def.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {
namespace {

constexpr int kMaxDepth = 16;

// The node's decomposition built on `inputs`, with the nodes it creates decomposed again where needed.
std::vector<ir::Value> decomposed(const ir::Node& node, const std::vector<ir::Value>& inputs,
                                  const std::function<bool(const ir::Node&)>& unsupported, int depth) {
  TESSERA_CHECK(depth < kMaxDepth, "decompose: op '{}' decomposes without end", node.op_name());
  std::vector<ir::Value> placeholders;
  for (size_t i = 0; i < inputs.size(); ++i) {
    placeholders.push_back(ir::make_input(fmt::format("{}_in{}", node.op_name(), i), inputs[i].type()));
  }
  const std::vector<ir::Value> outs = node.op().decompose(placeholders, node.attrs());
  const ir::Graph sub = ir::Graph::build(placeholders, outs, node.op_name());
  std::unordered_map<ir::Value, ir::Value, ir::ValueHash> map;
  for (size_t i = 0; i < inputs.size(); ++i) map.emplace(placeholders[i], inputs[i]);
  for (const ir::NodePtr& n : sub.nodes()) {
    TESSERA_CHECK(n->op_name() != node.op_name(), "decompose: the decomposition of '{}' uses '{}' again",
                  node.op_name(), node.op_name());
    std::vector<ir::Value> args;
    for (const ir::Value& in : n->inputs()) args.push_back(map.count(in) ? map.at(in) : in);
    std::vector<ir::Value> results =
        unsupported(*n) && n->op().decompose
            ? decomposed(*n, args, unsupported, depth + 1)
            : ir::make_node_typed(n->op(), std::move(args), n->attrs(), n->output_types());
    for (int i = 0; i < n->num_outputs(); ++i) map.emplace(ir::Value(n, i), results[static_cast<size_t>(i)]);
  }
  std::vector<ir::Value> result;
  for (const ir::Value& v : outs) result.push_back(map.count(v) ? map.at(v) : v);
  return result;
}

}  // namespace

namespace {

// Empty tensors stay whole: a decomposition may reduce with max or min, which have no value over an
// empty axis (softmax of f32[0] would not build), and an empty result costs nothing wherever it runs.
bool touches_empty(const ir::Node& node) {
  for (const ir::Value& in : node.inputs()) {
    if (in.type().numel() == 0) return true;
  }
  for (const ir::TensorType& t : node.output_types()) {
    if (t.numel() == 0) return true;
  }
  return false;
}

}  // namespace

ir::Graph decompose_where(const ir::Graph& graph, const std::function<bool(const ir::Node&)>& unsupported) {
  detail::Rewriter rw(graph, "decompose_unsupported");
  return rw.run([&](const ir::Node& node, const std::vector<ir::Value>& inputs) -> std::optional<std::vector<ir::Value>> {
    if (node.is_leaf() || !node.op().decompose || !unsupported(node) || touches_empty(node)) return std::nullopt;
    return decomposed(node, inputs, unsupported, 0);
  });
}

}  // namespace tessera::passes
