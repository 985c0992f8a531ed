#include "tessera/passes/rewrite.h"

#include <cstring>

namespace tessera::passes::detail {

Rewriter::Rewriter(const ir::Graph& graph, std::string pass_name) : graph_(graph), pass_name_(std::move(pass_name)) {
  bound_.insert(graph.inputs().begin(), graph.inputs().end());
}

void Rewriter::count_original_uses() const {
  if (uses_counted_) return;
  uses_counted_ = true;
  for (const ir::NodePtr& node : graph_.nodes()) {
    for (const ir::Value& in : node->inputs()) ++old_uses_[in];
  }
  for (const ir::Value& out : graph_.outputs()) ++old_uses_[out];
}

const ir::Node* Rewriter::producer(const ir::Value& v) const {
  if (!v.defined() || (!bound_.empty() && bound_.count(v))) return nullptr;
  return v.node().get();
}

const ir::Node* Rewriter::producer(const ir::Value& v, const std::string& op) const {
  const ir::Node* node = producer(v);
  return node && node->op_name() == op ? node : nullptr;
}

int Rewriter::uses(const ir::Value& v) const {
  count_original_uses();
  auto count = [&](const ir::Value& original) {
    auto it = old_uses_.find(original);
    return it == old_uses_.end() ? 0 : it->second;
  };
  // An original value keeps its consumers unless it was replaced; a replacement inherits the
  // consumers of every value it replaced. (A consumer that was itself rewritten away may still be
  // counted: the estimate errs towards "used elsewhere", which only makes rules more careful.)
  int n = mapped_.count(v) ? 0 : count(v);
  if (auto it = redirected_.find(v); it != redirected_.end()) {
    for (const ir::Value& original : it->second) n += count(original);
  }
  return n == 0 ? 1 : n;  // a value a rule just created has the one consumer it was made for
}

int Rewriter::original_uses(const ir::Node& node, int output) const {
  count_original_uses();
  auto it = old_uses_.find(ir::Value(current_node(node), output));
  return it == old_uses_.end() ? 0 : it->second;
}

ir::NodePtr Rewriter::current_node(const ir::Node& node) const {
  TESSERA_CHECK(current_ && current_.get() == &node,
                "internal error in pass '{}': a rule asked about node %{} ({}) while visiting another", pass_name_,
                node.id(), node.op_name());
  return current_;
}

namespace {
bool same_inputs(const ir::Node& node, const std::vector<ir::Value>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] != node.inputs()[i]) return false;
  }
  return true;
}
}  // namespace

ir::NodePtr Rewriter::keep_node(const ir::Node& node, const std::vector<ir::Value>& inputs) const {
  if (same_inputs(node, inputs)) return current_node(node);
  // Rules only ever substitute values of identical types, so the node's recorded output types hold
  // for the copy and inference need not run again (TESSERA_VERIFY_PASSES re-checks them).
  return std::make_shared<const ir::Node>(&node.op(), inputs, node.attrs(), node.output_types());
}

std::vector<ir::Value> Rewriter::keep(const ir::Node& node, const std::vector<ir::Value>& inputs) const {
  const ir::NodePtr target = keep_node(node, inputs);
  std::vector<ir::Value> outs;
  outs.reserve(static_cast<size_t>(target->num_outputs()));
  for (int i = 0; i < target->num_outputs(); ++i) outs.emplace_back(target, i);
  return outs;
}

ir::Graph Rewriter::run(const Rule& rule) {
  mapped_.clear();
  redirected_.clear();
  auto map_value = [&](const ir::Value& v) -> const ir::Value& {
    if (mapped_.empty()) return v;
    auto it = mapped_.find(v);
    return it == mapped_.end() ? v : it->second;  // graph inputs map to themselves
  };

  std::vector<ir::Value> inputs;
  for (const ir::NodePtr& node : graph_.nodes()) {
    current_ = node;
    inputs.clear();
    for (const ir::Value& in : node->inputs()) inputs.push_back(map_value(in));
    std::optional<std::vector<ir::Value>> replaced = rule(*node, inputs);
    if (!replaced && same_inputs(*node, inputs)) continue;  // the common case: nothing to do
    std::vector<ir::Value> outs = replaced ? std::move(*replaced) : keep(*node, inputs);
    TESSERA_CHECK(static_cast<int>(outs.size()) == node->num_outputs(),
                  "internal error in pass '{}': node %{} ({}) has {} outputs but was replaced by {} values", pass_name_,
                  node->id(), node->op_name(), node->num_outputs(), outs.size());
    for (int i = 0; i < node->num_outputs(); ++i) {
      const ir::Value& now = outs[static_cast<size_t>(i)];
      if (now.node() == node && now.index() == i) continue;  // unchanged
      const ir::Value old(node, i);
      TESSERA_CHECK(now.defined() && now.type() == old.type(),
                    "internal error in pass '{}': output {} of node %{} ({}, {}) was replaced by a value of type {}",
                    pass_name_, i, node->id(), node->op_name(), ir::type_str(old.type()),
                    now.defined() ? ir::type_str(now.type()) : std::string("undefined"));
      mapped_.emplace(old, now);
      redirected_[now].push_back(old);
    }
  }
  current_.reset();
  if (mapped_.empty()) return graph_;
  std::vector<ir::Value> outputs;
  for (const ir::Value& out : graph_.outputs()) outputs.push_back(map_value(out));
  return ir::Graph::build(graph_.inputs(), std::move(outputs), graph_.name());
}

// --- matching helpers ----------------------------------------------------------------------------

namespace {
// Splat detection reads every element; beyond this size a constant is not worth scanning.
constexpr int64_t kMaxSplatScan = 1 << 16;
}  // namespace

std::optional<double> splat_value(const Rewriter& rw, const ir::Value& v) {
  const ir::Node* node = rw.producer(v);
  for (int depth = 0; node && depth < 8; ++depth) {
    const std::string& op = node->op_name();
    if (op == "full") return node->attrs().get_float("value");
    if (op == "constant") {
      const Array& a = node->attrs().get_tensor("value");
      if (a.numel() == 0 || a.numel() > kMaxSplatScan) return std::nullopt;
      if (a.numel() == 1) return a.item();  // the common case: a scalar from `x * 2.0`
      const std::vector<double> values = a.to_f64();
      for (double x : values) {
        // Bitwise-equal elements only: 0.0 and -0.0 differ in what they do to x + 0.
        if (std::memcmp(&x, &values[0], sizeof x) != 0) return std::nullopt;
      }
      return values[0];
    }
    if (op != "reshape" && op != "broadcast_to") return std::nullopt;
    node = rw.producer(node->input(0));
  }
  return std::nullopt;
}

bool is_constant_like(const Rewriter& rw, const ir::Value& v) {
  // Depth-limited: constant subexpressions that matter (scalars, small broadcasts) are shallow.
  std::function<bool(const ir::Value&, int)> walk = [&](const ir::Value& x, int depth) {
    const ir::Node* node = rw.producer(x);
    if (!node || depth > 4 || node->op().has(ir::kRandom) || node->op_name() == "input") return false;
    for (const ir::Value& in : node->inputs()) {
      if (!walk(in, depth + 1)) return false;
    }
    return true;
  };
  return walk(v, 0);
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  }
  return true;
}

std::optional<std::vector<ir::Value>> accept(const std::optional<ir::Value>& v, const ir::TensorType& type) {
  if (!v || !v->defined() || v->type() != type) return std::nullopt;
  return std::vector<ir::Value>{*v};
}

std::optional<ir::Value> as_type(const ir::Value& x, const ir::TensorType& to) {
  if (x.type() == to) return x;
  if (x.dtype() != to.dtype || !broadcasts_to(x.shape(), to.shape)) return std::nullopt;
  return ir::make_node1("broadcast_to", {x}, ir::Attrs{{"shape", to.shape}});
}

bool same_graph(const ir::Graph& a, const ir::Graph& b) {
  return a.outputs() == b.outputs() && a.inputs() == b.inputs() && a.nodes() == b.nodes();
}

}  // namespace tessera::passes::detail
