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
  ReferenceExecutable(ir::Graph graph, std::vector<Alias> aliases) : graph_(std::move(graph)) {
    aliases_ = std::move(aliases);
    for (const ir::NodePtr& node : graph_.nodes()) {
      for (const ir::Value& in : node->inputs()) ++uses_[in];
    }
    for (const ir::Value& out : graph_.outputs()) ++uses_[out];
  }

  const ir::Graph& graph() const override { return graph_; }

  std::vector<Array> run(const std::vector<Array>& given) override {
    check_inputs(graph_, given);
    // The kernels read host memory: inputs that live elsewhere are copied to the host first.
    std::vector<Array> inputs;
    inputs.reserve(given.size());
    for (const Array& a : given) inputs.push_back(a.to(host_device()));
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
    // Aliased outputs are written into their inputs' memory, after every kernel has read it.
    for (const Alias& a : aliases_) {
      const Array value = results[static_cast<size_t>(a.output)].copy();
      Array target = given[static_cast<size_t>(a.input)];
      target.copy_from(value);
      results[static_cast<size_t>(a.output)] = target;
    }
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
  std::string status() const override { return "available: every op, on the host, one node at a time (the oracle)"; }
  bool supports(const ir::Node& node) const override { return static_cast<bool>(node.op().reference); }
  using Backend::compile;
  std::unique_ptr<Executable> compile(const ir::Graph& graph, const CompileSpec& spec) override {
    check_aliases(graph, spec.aliases);
    return std::make_unique<ReferenceExecutable>(graph, spec.aliases);
  }
};

}  // namespace

Backend& reference_backend() {
  static ReferenceBackend backend;
  return backend;
}

}  // namespace tessera::backends
