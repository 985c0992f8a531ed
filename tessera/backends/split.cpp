#include "tessera/backends/split.h"

#include <unordered_map>
#include <unordered_set>

#include "tessera/passes/decompose.h"

namespace tessera::backends {
namespace {

struct CompiledSegment {
  Backend* backend = nullptr;
  std::unique_ptr<Executable> executable;
  std::vector<ir::Value> inputs, outputs;  // values of the whole graph
};

class SplitExecutable final : public Executable {
 public:
  SplitExecutable(ir::Graph graph, std::vector<CompiledSegment> segments, std::vector<Alias> aliases, Device& device)
      : graph_(std::move(graph)), segments_(std::move(segments)), device_(&device) {
    aliases_ = std::move(aliases);
  }

  const ir::Graph& graph() const override { return graph_; }
  Device& device() const override { return *device_; }
  int64_t peak_bytes() const override {
    int64_t peak = 0;
    for (const CompiledSegment& s : segments_) peak = std::max(peak, s.executable->peak_bytes());
    return peak;
  }

  std::vector<Array> run(const std::vector<Array>& inputs) override {
    check_inputs(graph_, inputs);
    std::unordered_map<ir::Value, Array, ir::ValueHash> env;
    for (size_t i = 0; i < inputs.size(); ++i) env[graph_.inputs()[i]] = inputs[i];
    for (const CompiledSegment& s : segments_) {
      std::vector<Array> args;
      for (const ir::Value& v : s.inputs) args.push_back(env.at(v).to(s.executable->device()));
      std::vector<Array> outs = s.executable->run(args);
      for (size_t k = 0; k < outs.size(); ++k) env[s.outputs[k]] = std::move(outs[k]);
    }
    std::vector<Array> results;
    for (const ir::Value& v : graph_.outputs()) results.push_back(env.at(v));
    // Graph outputs may come from any segment; constants and inputs passed through stay where they are.
    for (const Alias& a : aliases_) {
      Array target = inputs[static_cast<size_t>(a.input)];
      target.copy_from(results[static_cast<size_t>(a.output)]);
      results[static_cast<size_t>(a.output)] = target;
    }
    return results;
  }

 private:
  ir::Graph graph_;
  std::vector<CompiledSegment> segments_;
  Device* device_;
};

}  // namespace

SplitPlan plan_split(const ir::Graph& graph, Backend& primary, Backend& fallback) {
  SplitPlan plan;
  plan.graph = passes::decompose_where(graph, [&](const ir::Node& n) { return !primary.supports(n); });
  for (const ir::NodePtr& n : plan.graph.nodes()) {
    Backend* b = primary.supports(*n) ? &primary : fallback.supports(*n) ? &fallback : nullptr;
    TESSERA_CHECK(b != nullptr, "op '{}' ({}) runs on neither the {} nor the {} backend", n->op_name(),
                  ir::type_str(n->output_types()[0]), primary.name(), fallback.name());
    // Leaves (constants) go with their first consumer: a segment holds its constants itself.
    if (n->is_leaf()) continue;
    if (plan.segments.empty() || plan.segments.back().backend != b) plan.segments.push_back({b, {}});
    plan.segments.back().nodes.push_back(n);
  }
  return plan;
}

std::unique_ptr<Executable> compile_split(const ir::Graph& graph, Backend& primary, Backend& fallback,
                                          const CompileSpec& spec) {
  check_aliases(graph, spec.aliases);
  SplitPlan plan = plan_split(graph, primary, fallback);
  if (plan.segments.size() <= 1) {
    Backend& only = plan.segments.empty() ? primary : *plan.segments.front().backend;
    return only.compile(plan.graph, spec);
  }
  const ir::Graph& g = plan.graph;
  std::unordered_map<const ir::Node*, size_t> segment_of;
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    for (const ir::NodePtr& n : plan.segments[s].nodes) segment_of[n.get()] = s;
  }
  // A value a segment reads from outside (a graph input or an earlier segment's node) is an input of
  // its subgraph; constants stay inside the segments that use them.
  std::vector<std::vector<ir::Value>> ins(plan.segments.size()), outs(plan.segments.size());
  std::vector<std::unordered_set<ir::Value, ir::ValueHash>> in_seen(plan.segments.size()), out_seen(plan.segments.size());
  auto produced_by = [&](const ir::Value& v) -> long {
    if (g.is_input(v)) return -1;
    auto it = segment_of.find(v.node().get());
    return it == segment_of.end() ? -2 : static_cast<long>(it->second);  // -2: a leaf
  };
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    for (const ir::NodePtr& n : plan.segments[s].nodes) {
      for (const ir::Value& v : n->inputs()) {
        const long p = produced_by(v);
        if (p == static_cast<long>(s) || p == -2) continue;
        if (in_seen[s].insert(v).second) ins[s].push_back(v);
        if (p >= 0 && out_seen[static_cast<size_t>(p)].insert(v).second) outs[static_cast<size_t>(p)].push_back(v);
      }
    }
  }
  for (const ir::Value& v : g.outputs()) {
    const long p = produced_by(v);
    if (p >= 0 && out_seen[static_cast<size_t>(p)].insert(v).second) outs[static_cast<size_t>(p)].push_back(v);
  }
  std::vector<CompiledSegment> compiled;
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    if (outs[s].empty()) continue;  // nothing downstream needs it
    CompiledSegment c;
    c.backend = plan.segments[s].backend;
    c.inputs = ins[s];
    c.outputs = outs[s];
    c.executable = c.backend->compile(ir::Graph::build(ins[s], outs[s], fmt::format("{}.part{}", g.name(), s)));
    compiled.push_back(std::move(c));
  }
  // Outputs that are inputs or constants of the graph come straight from the environment; constants
  // reach it through a trivial segment only if something reads them, so give them one here.
  std::vector<ir::Value> leaf_outputs;
  for (const ir::Value& v : g.outputs()) {
    if (produced_by(v) == -2) leaf_outputs.push_back(v);
  }
  if (!leaf_outputs.empty()) {
    CompiledSegment c;
    c.backend = &fallback;
    c.outputs = leaf_outputs;
    c.executable = fallback.compile(ir::Graph::build({}, leaf_outputs, g.name() + ".constants"));
    compiled.insert(compiled.begin(), std::move(c));
  }
  return std::make_unique<SplitExecutable>(g, std::move(compiled), spec.aliases, primary.device());
}

}  // namespace tessera::backends
