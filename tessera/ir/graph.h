#pragma once
// Graph: the slice of the node DAG between a list of input values and a list of output values, with
// its nodes in topological order. Inputs are usually `input` leaves, but any value may be bound as an
// input (the evaluator binds already-computed values this way). Constants live inside the graph.
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/node.h"

namespace tessera::ir {

// A computation with named inputs and outputs: the unit that passes rewrite and backends compile.
class Graph {
 public:
  Graph() = default;
  // Collects every node needed for `outputs` that is not behind an input, in topological order.
  // Throws if an output depends on an `input` leaf that is not among `inputs`.
  static Graph build(std::vector<Value> inputs, std::vector<Value> outputs, std::string name = "main");

  const std::string& name() const { return name_; }  // for printing and messages ("main" by default)
  const std::vector<Value>& inputs() const { return inputs_; }  // in the order run() takes their arrays
  const std::vector<Value>& outputs() const { return outputs_; }  // in the order run() returns them
  const std::vector<NodePtr>& nodes() const { return nodes_; }  // excludes nodes bound as inputs
  std::vector<TensorType> input_types() const;   // the inputs' dtypes and shapes, in order
  std::vector<TensorType> output_types() const;  // the outputs' dtypes and shapes, in order
  bool is_input(const Value& v) const;  // whether `v` is bound as one of the inputs

 private:
  std::string name_ = "main";
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  std::vector<NodePtr> nodes_;
};

// Checks the graph's invariants: every node input is an earlier node's output or a graph input,
// attributes match their schemas, inferred types match the recorded ones, outputs are defined.
// Throws tessera::Error describing the first violation.
void verify(const Graph& graph);

// The graph's nodes rebuilt downstream of the values `replace` maps (value -> its replacement): every
// node reading a replaced value, directly or not, is rebuilt on the replacements (same op, attributes and
// types); the rest are shared unchanged. Returns `replace` completed with each rebuilt node's outputs;
// `outputs_of` reads the new graph's outputs from it.
std::unordered_map<Value, Value, ValueHash> substitute(const Graph& graph,
                                                       std::unordered_map<Value, Value, ValueHash> replace);
// The graph's outputs through `map` (an output the map lacks stays itself).
std::vector<Value> outputs_of(const Graph& graph, const std::unordered_map<Value, Value, ValueHash>& map);

// Stable text form; parse_graph(print_graph(g)) prints back to the same text.
std::string print_graph(const Graph& graph);
// The numbers print_graph gives the values (%0, %1, ...), for messages that point into the text.
std::unordered_map<Value, int, ValueHash> value_numbers(const Graph& graph);
// Reads print_graph's text back into a graph of fresh nodes; throws tessera::Error naming the line and
// column on bad text.
Graph parse_graph(const std::string& text);

// Graphviz DOT, one box per node labelled with op, attributes and output types.
std::string graph_to_dot(const Graph& graph);

}  // namespace tessera::ir
