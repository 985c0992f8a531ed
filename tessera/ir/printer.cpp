// The IR's text form. Values are numbered %0, %1, ... in definition order (graph inputs first), so
// the text does not depend on node ids and two equal graphs print identically.
#include <unordered_map>

#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"

namespace tessera::ir {

namespace {
std::string attrs_str(const Attrs& attrs) {
  if (attrs.empty()) return "";
  std::string s = " {";
  bool first = true;
  for (const auto& [name, value] : attrs.values()) {
    s += (first ? "" : ", ") + name + " = " + attr_value_str(value);
    first = false;
  }
  return s + "}";
}
}  // namespace

std::unordered_map<Value, int, ValueHash> value_numbers(const Graph& graph) {
  std::unordered_map<Value, int, ValueHash> number;
  int next = 0;
  for (const Value& v : graph.inputs()) number[v] = next++;
  for (const NodePtr& node : graph.nodes()) {
    for (int i = 0; i < node->num_outputs(); ++i) number[Value(node, i)] = next++;
  }
  return number;
}

std::string print_graph(const Graph& graph) {
  std::unordered_map<Value, int, ValueHash> number;
  int next = 0;
  std::string out = "graph @" + graph.name() + "(";
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& v = graph.inputs()[i];
    number[v] = next;
    std::string name =
        (v.node()->op_name() == "input") ? v.node()->attrs().get_string("name") : fmt::format("v{}", next);
    out += fmt::format("{}%{}: {} {{name = {}}}", i ? ", " : "", next, type_str(v.type()),
                       attr_value_str(AttrValue(name)));
    ++next;
  }
  out += ") {\n";
  for (const NodePtr& node : graph.nodes()) {
    std::string lhs, types;
    for (int i = 0; i < node->num_outputs(); ++i) {
      number[Value(node, i)] = next;
      lhs += fmt::format("{}%{}", i ? ", " : "", next++);
      types += (i ? ", " : "") + type_str(node->output_types()[i]);
    }
    std::string args;
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      args += fmt::format("{}%{}", i ? ", " : "", number.at(node->inputs()[i]));
    }
    out += fmt::format("  {} = {}({}){} : {}\n", lhs, node->op_name(), args, attrs_str(node->attrs()), types);
  }
  out += "  return";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    out += fmt::format("{} %{}", i ? "," : "", number.at(graph.outputs()[i]));
  }
  return out + "\n}\n";
}

std::string graph_to_dot(const Graph& graph) {
  auto esc = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      o += c;
    }
    return o;
  };
  std::unordered_map<const Node*, std::string> ids;
  std::string out =
      "digraph \"" + esc(graph.name()) + "\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  int n = 0;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& v = graph.inputs()[i];
    if (ids.count(v.node().get())) continue;
    const std::string id = fmt::format("in{}", i);
    ids[v.node().get()] = id;
    std::string label = v.node()->op_name() == "input" ? v.node()->attrs().get_string("name") : id;
    out += fmt::format("  {} [label=\"{}\\n{}\", shape=ellipse];\n", id, esc(label), esc(type_str(v.type())));
  }
  for (const NodePtr& node : graph.nodes()) {
    const std::string id = fmt::format("n{}", n++);
    ids[node.get()] = id;
    std::string label = node->op_name();
    for (const auto& [name, value] : node->attrs().values()) {
      std::string text = attr_value_str(value);
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      label += "\\n" + esc(name + "=" + text);
    }
    for (const auto& t : node->output_types()) label += "\\n" + esc(type_str(t));
    out += fmt::format("  {} [label=\"{}\"{}];\n", id, label,
                       node->is_leaf() ? ", style=filled, fillcolor=lightgrey" : "");
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      const Value& in = node->inputs()[i];
      out += fmt::format("  {} -> {} [label=\"{}\"];\n", ids.at(in.node().get()), id,
                         in.node()->num_outputs() > 1 ? fmt::format("#{}", in.index()) : "");
    }
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    out += fmt::format("  out{} [label=\"output {}\", shape=ellipse];\n  {} -> out{};\n", i, i,
                       ids.at(graph.outputs()[i].node().get()), i);
  }
  return out + "}\n";
}

}  // namespace tessera::ir
