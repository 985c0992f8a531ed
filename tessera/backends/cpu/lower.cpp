// Lowers an (optimised) graph into a Program: matmul epilogues are found first, the remaining
// fusable nodes are grouped into clusters for generated kernels, the units (clusters, library calls,
// reference fallbacks) are ordered so that each runs after its inputs, and each is lowered in turn.
#include "tessera/backends/cpu/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <queue>
#include <unordered_set>

#include "tessera/backends/cpu/jit.h"
#include "tessera/lower/fusion.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::backends::cpu {

const LoweringTable& library_lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
    register_view_lowerings(t);
    register_matmul_lowerings(t);
    register_conv_lowerings(t);
    register_pool_lowerings(t);
    register_softmax_lowerings(t);
    register_quant_lowerings(t);
    register_reduce_lowerings(t);
    register_index_lowerings(t);
    return t;
  }();
  return table;
}

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class LoopKernelStep final : public Step {
 public:
  LoopKernelStep(std::shared_ptr<const LoopKernel> kernel, std::vector<Operand> inputs, std::vector<Operand> outputs)
      : kernel_(std::move(kernel)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  void run(const RunContext& ctx) const override {
    for (size_t i = 0; i < inputs_.size(); ++i) ctx.kernel_inputs[i] = ctx.ptr<const std::byte>(inputs_[i]);
    for (size_t i = 0; i < outputs_.size(); ++i) ctx.kernel_outputs[i] = ctx.ptr<std::byte>(outputs_[i]);
    kernel_->run(ctx.kernel_inputs, ctx.kernel_outputs, *ctx.pool);
  }
  StepKind kind() const override { return StepKind::kernel; }
  std::string describe() const override {
    return fmt::format("kernel {} ({} in, {} out)", kernel_->name(), inputs_.size(), outputs_.size());
  }

 private:
  std::shared_ptr<const LoopKernel> kernel_;
  std::vector<Operand> inputs_, outputs_;
};

void warn_once(const std::string& message) {
  static std::mutex mutex;
  static std::unordered_set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  if (seen.insert(message).second) std::fprintf(stderr, "tessera cpu backend: %s\n", message.c_str());
}

// A unit of scheduling: one node, a matmul with its fused tail, a cluster for a generated kernel, or
// a group of optimiser updates run as one pass.
struct Unit {
  std::vector<ir::NodePtr> nodes;
  int cluster = -1;
  bool adam_group = false;
};

class GraphLowerer {
 public:
  GraphLowerer(const ir::Graph& graph, const LowerOptions& options,
               const std::unordered_map<const ir::Node*, int32_t>& original_constants)
      : graph_(graph), options_(options), original_constants_(original_constants), L_(graph, options.fusion) {}

  std::unique_ptr<Program> run() {
    try {
      return lower();
    } catch (const LoweringFault& fault) {
      if (!fault.workaround().empty() || workaround_.empty()) throw;
      throw LoweringFault(fault.node(), fault.what(), workaround_);
    } catch (const std::exception& e) {
      // Anything else thrown while lowering is a bug here too: name the node it happened at.
      throw LoweringFault(L_.current_node(), e.what(), workaround_);
    }
  }

 private:
  std::unique_ptr<Program> lower() {
    const auto t0 = std::chrono::steady_clock::now();
    bind_leaves();
    L_.set_epilogues(find_epilogues(
        graph_, [this](const ir::Value& v) { return L_.uses(v); }, options_.fusion));
    for (const ir::NodePtr& n : graph_.nodes()) {
      if (const Epilogue* e = L_.epilogue(*n)) {
        for (const ir::Node* absorbed : e->nodes) owner_[absorbed] = n.get();
      }
    }
    double jit_ms = 0, cluster_ms = 0;
    form_clusters(&cluster_ms, &jit_ms);
    // Grouping every adam_update into one pass can close a cycle between the group and the nodes
    // around it (an update whose input depends on another update); then each update runs alone.
    const bool group_adam = options_.fusion.has(Fusion::adam_groups);
    std::optional<std::vector<Unit>> order = schedule(make_units(group_adam));
    if (!order && group_adam) order = schedule(make_units(false));
    if (!order) {
      throw LoweringFault(nullptr, "the scheduling units (fused clusters, matmul epilogues) form a cycle",
                          "TESSERA_FUSION=-clusters,-epilogue");
    }
    for (const Unit& unit : *order) lower_unit(unit);
    workaround_.clear();
    std::unique_ptr<Program> program = L_.finish();
    program->max_kernel_args = max_kernel_args_;
    program->stats.jit_used = !kernels_.empty();
    program->stats.jit_ms = jit_ms;
    program->stats.cluster_ms = cluster_ms;
    program->stats.lower_ms = ms_since(t0) - jit_ms - cluster_ms;
    return program;
  }

  void bind_leaves() {
    Program& p = L_.program();
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      const ir::Value& v = graph_.inputs()[i];
      input_values_.insert(v);
      const int32_t b = L_.new_buffer(BufferKind::input, static_cast<int32_t>(i),
                                      v.type().numel() * static_cast<int64_t>(dtype_size(v.dtype())));
      L_.bind(v, b, v.dtype());
    }
    for (const ir::NodePtr& n : graph_.nodes()) {
      if (n->op_name() != "constant") continue;
      ConstantSource src;
      if (auto it = original_constants_.find(n.get()); it != original_constants_.end()) {
        src.original = it->second;
      } else {
        src.owned = n->attrs().get_tensor("value").contiguous();
      }
      const auto slot = static_cast<int32_t>(p.constants.size());
      p.constants.push_back(std::move(src));
      const ir::Value v(n, 0);
      const int32_t b =
          L_.new_buffer(BufferKind::constant, slot, v.type().numel() * static_cast<int64_t>(dtype_size(v.dtype())));
      L_.bind(v, b, v.dtype());
    }
  }

  // Which nodes go into generated kernels, then the clusters themselves (compiled here).
  void form_clusters(double* cluster_ms, double* jit_ms) {
    if (options_.jit == JitMode::off) return;
    const auto tc = std::chrono::steady_clock::now();
    const LoweringTable& table = library_lowerings();
    std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users;
    for (const ir::NodePtr& n : graph_.nodes()) {
      for (const ir::Value& in : n->inputs()) users[in.node().get()].push_back(n.get());
    }
    std::unordered_set<const ir::Node*> graph_output_nodes;
    for (const ir::Value& v : graph_.outputs()) graph_output_nodes.insert(v.node().get());
    const std::vector<ir::NodePtr>& nodes = graph_.nodes();
    for (size_t i = nodes.size(); i-- > 0;) {
      const ir::Node& n = *nodes[i];
      if (n.is_leaf() || owner_.count(&n) != 0 || L_.epilogue(n) != nullptr) continue;
      auto entry = table.find(n.op_name());
      if (entry != table.end() && entry->second.over_jit && entry->second.claims(n)) continue;
      if (!lower::can_generate(n)) continue;
      if (n.op().has(ir::kView)) {
        // A view joins a kernel only when every consumer is generated code; otherwise it stays free.
        if (graph_output_nodes.count(&n) != 0) continue;
        bool all = true;
        for (const ir::Node* u : users[&n]) all = all && eligible_.count(u) != 0;
        if (!all || users[&n].empty()) continue;
      }
      eligible_.insert(&n);
    }
    if (eligible_.empty()) return;
    std::vector<lower::Cluster> clusters;
    if (options_.fusion.has(Fusion::clusters)) {
      clusters = lower::find_clusters(graph_, [this](const ir::Node& n) { return eligible_.count(&n) != 0; });
    } else {
      for (const ir::NodePtr& n : graph_.nodes()) {
        if (eligible_.count(n.get()) != 0) clusters.push_back(single_node_cluster(n));
      }
    }
    *cluster_ms = ms_since(tc);
    int64_t work = 0;
    for (const lower::Cluster& c : clusters) {
      for (const ir::NodePtr& n : c.nodes) work += n->output_types()[0].numel();
    }
    if (options_.jit == JitMode::automatic && work < options_.jit_min_elements) {
      eligible_.clear();
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    try {
      kernels_ = compile_clusters(clusters);
      clusters_ = std::move(clusters);
    } catch (const std::exception& first) {
      // Keep what can be generated: clusters the loop IR rejects are split into single nodes.
      try {
        clusters = generatable(clusters);
        kernels_ = compile_clusters(clusters);
        clusters_ = std::move(clusters);
        warn_once(fmt::format("some fused kernels could not be generated and were split: {}", first.what()));
      } catch (const std::exception& e) {
        warn_once(fmt::format("generated kernels unavailable, running those ops on reference kernels: {}", e.what()));
        kernels_.clear();
        clusters_.clear();
      }
    }
    *jit_ms = ms_since(t0);
  }

  static bool generatable(const lower::Cluster& c) {
    try {
      lower::build_loop_kernel(c);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  static std::vector<lower::Cluster> generatable(const std::vector<lower::Cluster>& clusters) {
    std::vector<lower::Cluster> kept;
    for (const lower::Cluster& c : clusters) {
      if (generatable(c)) {
        kept.push_back(c);
        continue;
      }
      for (const ir::NodePtr& n : c.nodes) {
        lower::Cluster single = single_node_cluster(n);
        if (generatable(single)) kept.push_back(std::move(single));
      }
    }
    return kept;
  }

  static lower::Cluster single_node_cluster(const ir::NodePtr& n) {
    lower::Cluster single;
    single.nodes = {n};
    for (const ir::Value& in : n->inputs()) {
      if (std::find(single.inputs.begin(), single.inputs.end(), in) == single.inputs.end()) {
        single.inputs.push_back(in);
      }
    }
    for (int i = 0; i < n->num_outputs(); ++i) single.outputs.emplace_back(n, i);
    return single;
  }

  std::vector<Unit> make_units(bool group_adam) {
    unit_of_.clear();
    std::vector<Unit> units;
    std::unordered_map<const ir::Node*, int> cluster_of;
    for (size_t c = 0; c < clusters_.size(); ++c) {
      for (const ir::NodePtr& n : clusters_[c].nodes) cluster_of[n.get()] = static_cast<int>(c);
    }
    std::vector<int> cluster_unit(clusters_.size(), -1);
    std::unordered_map<std::string, int> adam_unit;
    for (const ir::NodePtr& n : graph_.nodes()) {
      if (n->is_leaf()) continue;
      if (n->op_name() == "adam_update" && claim_adam_update(*n)) {
        const std::string key = group_adam ? adam_group_key(*n) : std::to_string(n->id());
        auto [it, fresh] = adam_unit.emplace(key, static_cast<int>(units.size()));
        if (fresh) units.push_back(Unit{{}, -1, true});
        units[static_cast<size_t>(it->second)].nodes.push_back(n);
        unit_of_[n.get()] = it->second;
        continue;
      }
      if (auto it = owner_.find(n.get()); it != owner_.end()) {
        units[static_cast<size_t>(unit_of_.at(it->second))].nodes.push_back(n);
        unit_of_[n.get()] = unit_of_.at(it->second);
        continue;
      }
      if (auto it = cluster_of.find(n.get()); it != cluster_of.end()) {
        int& u = cluster_unit[static_cast<size_t>(it->second)];
        if (u < 0) {
          u = static_cast<int>(units.size());
          units.push_back(Unit{{}, it->second, false});
        }
        units[static_cast<size_t>(u)].nodes.push_back(n);
        unit_of_[n.get()] = u;
        continue;
      }
      unit_of_[n.get()] = static_cast<int>(units.size());
      units.push_back(Unit{{n}, -1, false});
    }
    return units;
  }

  // Orders the units so that each follows the producers of its inputs (Kahn's algorithm, keeping
  // the graph's order wherever the dependencies allow); nothing if they form a cycle.
  std::optional<std::vector<Unit>> schedule(std::vector<Unit> units) {
    const size_t n = units.size();
    std::vector<std::vector<int>> dependents(n);
    std::vector<int> pending(n, 0);
    for (size_t u = 0; u < n; ++u) {
      std::unordered_set<int> deps;
      for (const ir::NodePtr& node : units[u].nodes) {
        for (const ir::Value& in : node->inputs()) {
          if (input_values_.count(in) != 0) continue;
          auto it = unit_of_.find(in.node().get());
          if (it != unit_of_.end() && it->second != static_cast<int>(u)) deps.insert(it->second);
        }
      }
      pending[u] = static_cast<int>(deps.size());
      for (int d : deps) dependents[static_cast<size_t>(d)].push_back(static_cast<int>(u));
    }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (size_t u = 0; u < n; ++u) {
      if (pending[u] == 0) ready.push(static_cast<int>(u));
    }
    std::vector<Unit> order;
    order.reserve(n);
    while (!ready.empty()) {
      const int u = ready.top();
      ready.pop();
      order.push_back(std::move(units[static_cast<size_t>(u)]));
      for (int d : dependents[static_cast<size_t>(u)]) {
        if (--pending[static_cast<size_t>(d)] == 0) ready.push(d);
      }
    }
    if (order.size() != n) return std::nullopt;
    return order;
  }

  void lower_unit(const Unit& unit) {
    const ir::NodePtr& head = unit.nodes.front();
    L_.set_current_node(head.get());
    // The switch that would have avoided this unit's fusion, for an internal error's advice.
    workaround_ = unit.cluster >= 0                          ? "TESSERA_FUSION=-clusters (or TESSERA_JIT=0)"
                  : unit.adam_group && unit.nodes.size() > 1 ? "TESSERA_FUSION=-adam_groups"
                  : unit.nodes.size() > 1                    ? "TESSERA_FUSION=-epilogue,-transposed_product"
                                                             : "";
    if (unit.cluster >= 0) return lower_cluster(static_cast<size_t>(unit.cluster));
    if (unit.adam_group) return lower_adam_group(L_, unit.nodes);
    if (unit.nodes.size() > 1) {  // a matmul or convolution with its fused tail
      if (library_lowerings().at(head->op_name()).lower(L_, head)) return;
      for (const ir::NodePtr& n : unit.nodes) lower_node(n);
      return;
    }
    lower_node(head);
  }

  void lower_node(const ir::NodePtr& node) {
    L_.set_current_node(node.get());
    const LoweringTable& table = library_lowerings();
    if (auto it = table.find(node->op_name()); it != table.end() && it->second.lower(L_, node)) return;
    std::vector<int32_t> ins;
    std::vector<Operand> in_ops;
    std::vector<ir::TensorType> in_types;
    for (const ir::Value& v : node->inputs()) {
      ins.push_back(L_.packed(L_.value(v)));
      in_ops.push_back(L_.operand(ins.back()));
      in_types.push_back(v.type());
    }
    std::vector<int32_t> outs;
    std::vector<Operand> out_ops;
    for (int i = 0; i < node->num_outputs(); ++i) {
      outs.push_back(L_.produce(ir::Value(node, i)));
      out_ops.push_back(L_.operand(outs.back()));
    }
    L_.emit(make_fallback_step(*node, std::move(in_ops), std::move(in_types), std::move(out_ops)), ins, outs);
    L_.program().stats.fallback_ops.push_back(node->op_name());
  }

  void lower_cluster(size_t c) {
    const lower::Cluster& cluster = clusters_[c];
    std::vector<int32_t> ins, outs;
    std::vector<Operand> in_ops, out_ops;
    for (const ir::Value& v : cluster.inputs) {
      ins.push_back(L_.packed(L_.value(v)));
      in_ops.push_back(L_.operand(ins.back()));
    }
    for (const ir::Value& v : cluster.outputs) {
      outs.push_back(L_.produce(v));
      out_ops.push_back(L_.operand(outs.back()));
    }
    // A purely elementwise kernel with one output may write over an input of the same type that dies
    // here and that no other input views: element i is read before element i is written.
    bool elementwise = cluster.outputs.size() == 1;
    for (const ir::NodePtr& n : cluster.nodes) elementwise = elementwise && n->op().has(ir::kElementwise);
    if (elementwise) {
      for (size_t i = 0; i < cluster.inputs.size(); ++i) {
        if (cluster.inputs[i].type() == cluster.outputs[0].type()) {
          L_.allow_in_place(outs[0], ins[i], ins);
          break;
        }
      }
    }
    max_kernel_args_ = std::max<int32_t>(max_kernel_args_, static_cast<int32_t>(std::max(ins.size(), outs.size())));
    L_.emit(std::make_unique<LoopKernelStep>(kernels_[c], std::move(in_ops), std::move(out_ops)), ins, outs);
  }

  const ir::Graph& graph_;
  const LowerOptions& options_;
  const std::unordered_map<const ir::Node*, int32_t>& original_constants_;
  Lowering L_;
  std::unordered_set<ir::Value, ir::ValueHash> input_values_;
  std::unordered_map<const ir::Node*, const ir::Node*> owner_;  // absorbed node -> its matmul/conv
  std::unordered_set<const ir::Node*> eligible_;
  std::vector<lower::Cluster> clusters_;
  std::vector<std::shared_ptr<const LoopKernel>> kernels_;
  std::unordered_map<const ir::Node*, int> unit_of_;
  int32_t max_kernel_args_ = 0;
  std::string workaround_;
};

}  // namespace

std::unique_ptr<Program> lower_graph(const ir::Graph& graph, const LowerOptions& options,
                                     const std::unordered_map<const ir::Node*, int32_t>& original_constants) {
  return GraphLowerer(graph, options, original_constants).run();
}

}  // namespace tessera::backends::cpu
