#include "tessera/backends/common/cache_appends.h"

#include <algorithm>

namespace tessera::backends::common {

namespace {

// The index_copy along axis 0 at `positions` that produces `v` from one f32 row (convert_on_write folded
// the cast into a 16-bit cache), when its result is read only by one node (the attention) besides the
// graph's outputs; else null.
const ir::Node* foldable_write(const ir::Graph& graph, const ir::Value& v, const ir::Value& positions,
                               const std::function<int64_t(const ir::Value&)>& uses) {
  const ir::Node& n = *v.node();
  if (n.op_name() != "index_copy" || n.inputs().size() != 3 || n.attrs().get_int("axis") != 0) return nullptr;
  if (n.input(1) != positions || positions.type().numel() != 1 || n.input(2).dtype() != DType::f32) return nullptr;
  const auto outputs = std::count(graph.outputs().begin(), graph.outputs().end(), v);
  return uses(v) == 1 + outputs ? &n : nullptr;
}

}  // namespace

CacheAppendMap find_cache_appends(const ir::Graph& graph, const std::function<int64_t(const ir::Value&)>& uses,
                                  const std::function<bool(const ir::Node&)>& folds) {
  CacheAppendMap found;
  for (const ir::NodePtr& n : graph.nodes()) {
    if (n->op_name() != "kv_cache_attention" || n->inputs().size() != 4 || !folds(*n)) continue;
    CacheAppend a;
    a.keys = foldable_write(graph, n->input(1), n->input(3), uses);
    a.values = foldable_write(graph, n->input(2), n->input(3), uses);
    if (a.keys != nullptr && a.values != nullptr && a.keys != a.values) found.emplace(n.get(), a);
  }
  return found;
}

}  // namespace tessera::backends::common
