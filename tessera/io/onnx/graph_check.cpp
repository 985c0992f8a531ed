#include "tessera/io/onnx/graph_check.h"

#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/onnx/model_impl.h"
#include "tessera/io/onnx/tensor_proto.h"

namespace tessera::io::onnx {

namespace {

constexpr int kGraphLevel = -1;  // the producer of graph inputs and initializers

}  // namespace

std::vector<int> check_graph(const pb::GraphProto& graph, const std::string& source) {
  // Who defines each value: kGraphLevel for inputs and initializers, else the node's index.
  std::unordered_map<std::string, int> producer;
  auto define = [&](const std::string& name, int by, const std::string& what) {
    TESSERA_CHECK(!name.empty(), "{}: {} has an empty name", source, what);
    auto [it, fresh] = producer.emplace(name, by);
    // An input may repeat as an initializer (its default value, IR version < 4 style); nothing else may.
    TESSERA_CHECK(fresh || (by == kGraphLevel && it->second == kGraphLevel),
                  "{}: {} defines {}, which {} already defines", source, what, printable_quoted(name),
                  it->second == kGraphLevel ? std::string("the graph") : describe_node(graph.node(it->second), it->second));
  };
  for (const auto& init : graph.initializer()) {
    const std::string what = "initializer " + printable_quoted(init.name());
    define(init.name(), kGraphLevel, what);
    check_stored_size(init, source + ": " + what);
  }
  TESSERA_CHECK(graph.sparse_initializer_size() == 0, "{}: sparse initializers are not supported", source);
  std::unordered_set<std::string> inputs;
  for (const auto& in : graph.input()) {
    TESSERA_CHECK(inputs.insert(in.name()).second, "{}: graph input {} is listed twice", source,
                  printable_quoted(in.name()));
    define(in.name(), kGraphLevel, "graph input " + printable_quoted(in.name()));
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& out : graph.node(i).output()) {
      if (!out.empty()) define(out, i, describe_node(graph.node(i), i));
    }
  }

  // Kahn's algorithm over node -> node edges; nodes left over lie on (or behind) a cycle.
  const int n = graph.node_size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> readers(n);
  for (int i = 0; i < n; ++i) {
    for (const auto& in : graph.node(i).input()) {
      if (in.empty()) continue;  // an optional input left out
      auto it = producer.find(in);
      TESSERA_CHECK(it != producer.end(), "{}: {} reads {}, which no input, initializer or node defines", source,
                    describe_node(graph.node(i), i), printable_quoted(in));
      if (it->second != kGraphLevel) {
        ++pending[i];
        readers[it->second].push_back(i);
      }
    }
  }
  std::deque<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int r : readers[i]) {
      if (--pending[r] == 0) ready.push_back(r);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    // A node still waiting either lies on a cycle or behind one; walking n steps back through waiting
    // producers ends on the cycle itself.
    int at = 0;
    while (pending[at] == 0) ++at;
    for (int step = 0; step < n; ++step) {
      for (const auto& in : graph.node(at).input()) {
        auto it = producer.find(in);
        if (!in.empty() && it->second != kGraphLevel && pending[it->second] != 0) {
          at = it->second;
          break;
        }
      }
    }
    fail("{}: the graph has a cycle: {} depends on its own output through the nodes it reads", source,
         describe_node(graph.node(at), at));
  }
  for (const auto& out : graph.output()) {
    TESSERA_CHECK(producer.count(out.name()) != 0, "{}: graph output {} is not defined by any input or node", source,
                  printable_quoted(out.name()));
  }
  return order;
}

}  // namespace tessera::io::onnx
