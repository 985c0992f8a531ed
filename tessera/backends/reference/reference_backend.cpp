// The reference backend interprets the graph node by node with each OpDef's reference kernel, checks
// every kernel's result against the inferred type, and drops each intermediate after its last use.
#include <unordered_map>

#include "tessera/backends/backend.h"

namespace tessera::backends {

void check_inputs(const ir::Graph& graph, const std::vector<Array>& inputs) {
  TESSERA_CHECK(inputs.size() == graph.inputs().size(), "graph '{}' takes {} inputs, {} were given", graph.name(),
                graph.inputs().size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& want = graph.inputs()[i].type();
    TESSERA_CHECK(inputs[i].defined(), "graph '{}': input {} is undefined", graph.name(), i);
    TESSERA_CHECK(inputs[i].dtype() == want.dtype && inputs[i].shape() == want.shape,
                  "graph '{}': input {} is {}{} but the graph expects {}", graph.name(), i,
                  dtype_name(inputs[i].dtype()), shape_str(inputs[i].shape()), ir::type_str(want));
  }
}

namespace {

class ReferenceExecutable final : public Executable {
 public:
  explicit ReferenceExecutable(ir::Graph graph) : graph_(std::move(graph)) {
    for (const ir::NodePtr& node : graph_.nodes()) {
      for (const ir::Value& in : node->inputs()) ++uses_[in];
    }
    for (const ir::Value& out : graph_.outputs()) ++uses_[out];
  }

  const ir::Graph& graph() const override { return graph_; }

  std::vector<Array> run(const std::vector<Array>& inputs) override {
    check_inputs(graph_, inputs);
    std::unordered_map<ir::Value, Array, ir::ValueHash> env;
    std::unordered_map<ir::Value, int, ir::ValueHash> remaining = uses_;
    for (size_t i = 0; i < inputs.size(); ++i) env[graph_.inputs()[i]] = inputs[i];

    std::vector<Array> args;
    for (const ir::NodePtr& node : graph_.nodes()) {
      args.clear();
      for (const ir::Value& in : node->inputs()) args.push_back(env.at(in));
      std::vector<Array> outs = node->op().reference(args, node->attrs(), node->output_types());
      check_outputs(*node, outs);
      for (const ir::Value& in : node->inputs()) {
        if (--remaining[in] == 0) env.erase(in);  // free intermediates as soon as possible
      }
      for (int i = 0; i < node->num_outputs(); ++i) {
        ir::Value v(node, i);
        if (remaining[v] > 0) env[v] = std::move(outs[static_cast<size_t>(i)]);
      }
    }
    std::vector<Array> results;
    for (const ir::Value& out : graph_.outputs()) results.push_back(env.at(out));
    return results;
  }

 private:
  static void check_outputs(const ir::Node& node, const std::vector<Array>& outs) {
    TESSERA_CHECK(static_cast<int>(outs.size()) == node.num_outputs(),
                  "internal error: reference kernel of '{}' returned {} outputs, expected {}", node.op_name(),
                  outs.size(), node.num_outputs());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::TensorType& t = node.output_types()[i];
      TESSERA_CHECK(outs[i].defined() && outs[i].dtype() == t.dtype && outs[i].shape() == t.shape,
                    "internal error: reference kernel of '{}' returned {}{} for output {}, inferred {}", node.op_name(),
                    outs[i].defined() ? dtype_name(outs[i].dtype()) : "undefined",
                    outs[i].defined() ? shape_str(outs[i].shape()) : "", i, ir::type_str(t));
    }
  }

  ir::Graph graph_;
  std::unordered_map<ir::Value, int, ir::ValueHash> uses_;
};

class ReferenceBackend final : public Backend {
 public:
  std::string name() const override { return "reference"; }
  bool supports(const ir::OpDef& op) const override { return static_cast<bool>(op.reference); }
  std::unique_ptr<Executable> compile(const ir::Graph& graph) override {
    return std::make_unique<ReferenceExecutable>(graph);
  }
};

}  // namespace

Backend& reference_backend() {
  static ReferenceBackend backend;
  return backend;
}

}  // namespace tessera::backends
