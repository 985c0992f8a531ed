#include "tessera/ir/graph.h"

#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/op_def.h"

namespace tessera::ir {

Graph Graph::build(std::vector<Value> inputs, std::vector<Value> outputs, std::string name) {
  Graph g;
  g.name_ = std::move(name);
  std::unordered_set<Value, ValueHash> bound(inputs.begin(), inputs.end());
  std::unordered_set<const Node*> visited;
  for (const Value& v : inputs) TESSERA_CHECK(v.defined(), "Graph::build: undefined input value");

  // Iterative post-order DFS so that deep graphs (long training loops) cannot overflow the stack.
  struct Frame {
    NodePtr node;
    size_t next_input;
  };
  for (const Value& out : outputs) {
    TESSERA_CHECK(out.defined(), "Graph::build: undefined output value");
    if (bound.count(out) || visited.count(out.node().get())) continue;
    std::vector<Frame> stack{{out.node(), 0}};
    visited.insert(out.node().get());
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next_input < f.node->inputs().size()) {
        const Value& in = f.node->inputs()[f.next_input++];
        if (bound.count(in) || visited.count(in.node().get())) continue;
        visited.insert(in.node().get());
        stack.push_back({in.node(), 0});
        continue;
      }
      const NodePtr node = f.node;
      stack.pop_back();
      if (node->op_name() == "input") {
        fail("Graph::build: the graph depends on input '{}' ({}) which is not bound as a graph input",
             node->attrs().get_string("name"), type_str(node->output_types()[0]));
      }
      for (int i = 0; i < node->num_outputs(); ++i) {
        TESSERA_CHECK(!bound.count(Value(node, i)),
                      "Graph::build: node %{} ({}) is both computed and bound as an input", node->id(),
                      node->op_name());
      }
      g.nodes_.push_back(node);
    }
  }
  g.inputs_ = std::move(inputs);
  g.outputs_ = std::move(outputs);
  return g;
}

std::vector<TensorType> Graph::input_types() const {
  std::vector<TensorType> t;
  for (const auto& v : inputs_) t.push_back(v.type());
  return t;
}

std::vector<TensorType> Graph::output_types() const {
  std::vector<TensorType> t;
  for (const auto& v : outputs_) t.push_back(v.type());
  return t;
}

bool Graph::is_input(const Value& v) const {
  for (const auto& in : inputs_) {
    if (in == v) return true;
  }
  return false;
}

void verify(const Graph& graph) {
  std::unordered_set<Value, ValueHash> defined(graph.inputs().begin(), graph.inputs().end());
  std::unordered_set<const Node*> seen;
  for (const NodePtr& node : graph.nodes()) {
    TESSERA_CHECK(seen.insert(node.get()).second, "verify: node %{} ({}) appears twice", node->id(), node->op_name());
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      const Value& in = node->inputs()[i];
      TESSERA_CHECK(defined.count(in), "verify: input {} of node %{} ({}) is used before it is defined", i,
                    node->id(), node->op_name());
    }
    // Re-running inference checks attributes against the schema and the recorded output types.
    make_node_typed(node->op(), node->inputs(), node->attrs(), node->output_types());
    for (int i = 0; i < node->num_outputs(); ++i) defined.insert(Value(node, i));
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    TESSERA_CHECK(defined.count(graph.outputs()[i]), "verify: graph output {} is not defined in the graph", i);
  }
}

std::unordered_map<Value, Value, ValueHash> substitute(const Graph& graph,
                                                       std::unordered_map<Value, Value, ValueHash> replace) {
  for (const NodePtr& n : graph.nodes()) {
    bool touched = false;
    std::vector<Value> args;
    for (const Value& in : n->inputs()) {
      auto it = replace.find(in);
      touched = touched || it != replace.end();
      args.push_back(it != replace.end() ? it->second : in);
    }
    if (!touched) continue;  // independent of every replaced value: the node itself serves
    const std::vector<Value> outs = make_node_typed(n->op(), std::move(args), n->attrs(), n->output_types());
    for (int i = 0; i < n->num_outputs(); ++i) replace.emplace(Value(n, i), outs[static_cast<size_t>(i)]);
  }
  return replace;
}

std::vector<Value> outputs_of(const Graph& graph, const std::unordered_map<Value, Value, ValueHash>& map) {
  std::vector<Value> out;
  for (const Value& v : graph.outputs()) {
    auto it = map.find(v);
    out.push_back(it != map.end() ? it->second : v);
  }
  return out;
}

}  // namespace tessera::ir
