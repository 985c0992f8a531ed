// Graph structure keys and sealing for the plan cache.
#include "tessera/backends/common/plan_cache.h"

#include <iterator>
#include <unordered_set>

#include <fmt/format.h>

#include "tessera/backends/common/kernel_cache.h"

namespace tessera::backends::common {
namespace {

void append_type(std::string& out, const ir::TensorType& t) {
  out += dtype_name(t.dtype);
  out += shape_str(t.shape);
}

}  // namespace

std::string constants_digest(const GraphKey& key, const std::vector<size_t>& positions) {
  std::string digest;
  for (size_t p : positions) {
    const Array c = key.constants.at(p)->attrs().get_tensor("value").contiguous();
    digest += content_hash(std::string_view(static_cast<const char*>(c.raw_data()), c.nbytes()));
  }
  return digest;
}

std::vector<size_t> folded_constants(const GraphKey& key, const ir::Graph& sealed, const ir::Graph& optimized) {
  std::unordered_set<const ir::Node*> kept;
  for (const ir::NodePtr& n : optimized.nodes()) kept.insert(n.get());
  // Nodes computed from constants alone (topological order: inputs first).
  std::unordered_set<const ir::Node*> constant_expr;
  for (const ir::NodePtr& n : sealed.nodes()) {
    bool from_constants = n->op_name() == "constant";
    if (!n->is_leaf()) {
      from_constants = true;
      for (const ir::Value& in : n->inputs()) from_constants = from_constants && constant_expr.count(in.node().get()) != 0;
    }
    if (from_constants) constant_expr.insert(n.get());
  }
  // Every constant-only node the passes replaced (a fold), and back through what it computed from.
  std::unordered_set<const ir::Node*> feeds_rewrite;
  std::vector<const ir::Node*> stack;
  for (const ir::NodePtr& n : sealed.nodes()) {
    if (kept.count(n.get()) == 0 && constant_expr.count(n.get()) != 0) stack.push_back(n.get());
  }
  while (!stack.empty()) {
    const ir::Node* n = stack.back();
    stack.pop_back();
    if (constant_expr.count(n) == 0 || !feeds_rewrite.insert(n).second) continue;
    for (const ir::Value& in : n->inputs()) stack.push_back(in.node().get());
  }
  std::vector<size_t> folded;
  for (size_t i = 0; i < key.constants.size(); ++i) {
    // A constant the optimized graph no longer reads went into whatever replaced its readers.
    const ir::Node* c = key.constants[i];
    if (feeds_rewrite.count(c) != 0 || kept.count(c) == 0) folded.push_back(i);
  }
  return folded;
}

GraphKey graph_key(const ir::Graph& graph, std::string_view settings) {
  GraphKey k;
  std::string& s = k.structure;
  s.reserve(64 * (graph.nodes().size() + 1));
  s += settings;
  s += '|';
  std::unordered_map<ir::Value, size_t, ir::ValueHash> input_pos;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    input_pos.emplace(graph.inputs()[i], i);
    append_type(s, graph.inputs()[i].type());
    s += ',';
  }
  std::unordered_map<const ir::Node*, size_t> node_pos;
  auto ref = [&](const ir::Value& v) {
    if (auto it = input_pos.find(v); it != input_pos.end()) {
      fmt::format_to(std::back_inserter(s), "i{} ", it->second);
    } else {
      fmt::format_to(std::back_inserter(s), "n{}.{} ", node_pos.at(v.node().get()), v.index());
    }
  };
  for (const ir::NodePtr& n : graph.nodes()) {
    node_pos.emplace(n.get(), node_pos.size());
    s += '|';
    s += n->op_name();
    if (n->op_name() == "constant") {
      const Array& value = n->attrs().get_tensor("value");
      append_type(s, {value.dtype(), value.shape()});
      k.constants.push_back(n.get());
      if (value.numel() <= 16) {
        const Array c = value.contiguous();
        k.small_constants.append(static_cast<const char*>(c.raw_data()), c.nbytes());
      }
      continue;
    }
    s += '(';
    for (const ir::Value& in : n->inputs()) ref(in);
    s += ')';
    for (const auto& [name, value] : n->attrs().values()) {
      s += name;
      s += '=';
      if (const Array* t = std::get_if<Array>(&value)) {
        append_type(s, {t->dtype(), t->shape()});
      } else {
        s += ir::attr_value_str(value);
      }
      s += ' ';
    }
    for (const ir::TensorType& t : n->output_types()) append_type(s, t);
  }
  s += "|out ";
  for (const ir::Value& v : graph.outputs()) ref(v);
  return k;
}

ir::Graph with_placeholder_inputs(const ir::Graph& graph) {
  bool needed = false;
  for (const ir::Value& v : graph.inputs()) needed = needed || v.node()->op_name() != "input";
  if (!needed) return graph;
  std::unordered_map<ir::Value, ir::Value, ir::ValueHash> map;
  std::vector<ir::Value> inputs;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const ir::Value& v = graph.inputs()[i];
    inputs.push_back(ir::make_input(fmt::format("in{}", i), v.type()));
    map.emplace(v, inputs.back());
  }
  std::vector<ir::Value> outputs = ir::outputs_of(graph, ir::substitute(graph, std::move(map)));
  return ir::Graph::build(std::move(inputs), std::move(outputs), graph.name());
}

bool same_nodes(const ir::Graph& a, const ir::Graph& b) {
  if (a.nodes().size() != b.nodes().size() || a.outputs() != b.outputs()) return false;
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    if (a.nodes()[i] != b.nodes()[i]) return false;
  }
  return true;
}

}  // namespace tessera::backends::common
