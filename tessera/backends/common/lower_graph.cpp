// The generic graph lowerer: carries out the fusion plan (fusion_plan.h) with a backend's lowerings,
// steps and kernel compiler.
#include "tessera/backends/common/lower_graph.h"

#include "tessera/backends/common/compile_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/common/fusion_plan.h"
#include "tessera/lower/scalar_code.h"
#include "tessera/passes/pass.h"

namespace tessera::backends::common {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void warn_once(const std::string& message) {
  static std::mutex mutex;
  static std::unordered_set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  if (seen.insert(message).second) std::fprintf(stderr, "%s\n", message.c_str());
}

class GraphLowerer {
 public:
  GraphLowerer(const ir::Graph& graph, const BackendLowering& backend, const LowerOptions& options,
               const std::unordered_map<const ir::Node*, int32_t>& original_constants)
      : graph_(graph),
        backend_(backend),
        table_(*backend.table),
        options_(options),
        original_constants_(original_constants),
        L_(graph, options.fusion, *backend.steps) {}

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
    EpilogueMap epilogues = find_epilogues(
        graph_, [this](const ir::Value& v) { return L_.uses(v); }, options_.fusion, options_.epilogue_limits);
    owners_ = epilogue_owners(graph_, epilogues);
    if (options_.folds_cache_writes && options_.fusion.has(Fusion::epilogue)) {
      CacheAppendMap appends =
          find_cache_appends(graph_, [this](const ir::Value& v) { return L_.uses(v); }, options_.folds_cache_writes);
      for (const auto& [attention, a] : appends) owners_[a.keys] = owners_[a.values] = attention;
      L_.set_cache_appends(std::move(appends));
    }
    bool reads_constant_values = false;
    for (const auto& [node, e] : epilogues) reads_constant_values = reads_constant_values || e.reads_constant_values;
    double jit_ms = 0, cluster_ms = 0;
    if (backend_.kernels != nullptr) {
      const CompilePhase phase("fused kernels");
      compile_clusters(epilogues, &cluster_ms, &jit_ms);
    }
    L_.set_epilogues(std::move(epilogues));
    // Grouping (every adam_update in one pass) can close a cycle between a group and the nodes around
    // it (an update whose input depends on another update); then each node runs alone.
    const bool group = options_.fusion.has(Fusion::adam_groups);
    std::optional<std::vector<Unit>> order =
        schedule_units(graph_, make_units(graph_, table_, owners_, clusters_, group));
    if (!order && group) order = schedule_units(graph_, make_units(graph_, table_, owners_, clusters_, false));
    if (!order) {
      throw LoweringFault(nullptr, "the scheduling units (fused clusters, matmul epilogues) form a cycle",
                          "TESSERA_FUSION=-clusters,-epilogue");
    }
    {
      const CompilePhase phase("steps");
      for (const Unit& unit : *order) lower_unit(unit);
    }
    workaround_.clear();
    std::unique_ptr<Program> program = L_.finish();
    program->max_kernel_args = max_kernel_args_;
    program->reads_constant_values = reads_constant_values;
    program->stats.jit_used = !clusters_.empty();
    program->holds_constant_values = clusters_read_literal_constants();
    program->stats.jit_ms = jit_ms;
    program->stats.cluster_ms = cluster_ms;
    program->stats.lower_ms = ms_since(t0) - jit_ms - cluster_ms;
    return program;
  }

  void bind_leaves() {
    Program& p = L_.program();
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      const ir::Value& v = graph_.inputs()[i];
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

  // Whether a generated kernel reads a constant as a literal (its value is then in the kernel's code).
  bool clusters_read_literal_constants() const {
    for (const lower::Cluster& c : clusters_) {
      for (const ir::Value& v : c.inputs) {
        if (lower::is_literal_constant(*v.node())) return true;
      }
    }
    return false;
  }

  // Which nodes go into generated kernels, then the clusters themselves (compiled here).
  void compile_clusters(const EpilogueMap& epilogues, double* cluster_ms, double* jit_ms) {
    const auto tc = std::chrono::steady_clock::now();
    const std::unordered_set<const ir::Node*> eligible =
        cluster_eligible(graph_, table_, epilogues, owners_, options_.half_types);
    if (eligible.empty()) return;
    std::vector<lower::Cluster> clusters = form_clusters(graph_, eligible, options_.fusion,
                                                             lower::RowKernelRules{options_.fusion.has(Fusion::row_kernels),
                                                                                   options_.chain_reductions,
                                                                                   options_.max_row_kernel_elements,
                                                                                   options_.few_row_kernel_rows});
    clusters = within_buffer_limit(clusters, options_.max_kernel_buffers);
    *cluster_ms = ms_since(tc);
    if (cluster_work(clusters) < options_.min_generated_elements) return;
    const auto t0 = std::chrono::steady_clock::now();
    const KernelCompiler& compiler = *backend_.kernels;
    try {
      compiled_ = compiler.compile(clusters);
      clusters_ = std::move(clusters);
    } catch (const std::exception& first) {
      // Keep what can be generated: clusters the loop IR rejects are split into single nodes.
      try {
        clusters = generatable(clusters);
        compiled_ = compiler.compile(clusters);
        clusters_ = std::move(clusters);
        warn_once(fmt::format("tessera {} backend: some fused kernels could not be generated and were split: {}",
                              backend_.name, first.what()));
      } catch (const std::exception& e) {
        warn_once(
            fmt::format("tessera {} backend: generated kernels unavailable, running those ops on reference "
                        "kernels: {}",
                        backend_.name, e.what()));
        compiled_.reset();
        clusters_.clear();
      }
    }
    *jit_ms = ms_since(t0);
  }

  void lower_unit(const Unit& unit) {
    // The node that owns the others: a product before its tail, an attention after the cache writes it takes.
    const ir::NodePtr& head = *std::find_if(unit.nodes.begin(), unit.nodes.end(),
                                            [this](const ir::NodePtr& n) { return owners_.count(n.get()) == 0; });
    L_.set_current_node(head.get());
    // The switch that would have avoided this unit's fusion, for an internal error's advice.
    workaround_ = unit.cluster >= 0                     ? "TESSERA_FUSION=-clusters (or TESSERA_JIT=0)"
                  : unit.group && unit.nodes.size() > 1 ? "TESSERA_FUSION=-adam_groups"
                  : unit.nodes.size() > 1               ? "TESSERA_FUSION=-epilogue,-transposed_product"
                                                        : "";
    if (unit.cluster >= 0) return lower_cluster(static_cast<size_t>(unit.cluster));
    if (unit.group) return table_.at(head->op_name()).lower_group(L_, unit.nodes);
    if (unit.nodes.size() > 1) {  // a matmul or convolution with its fused tail, an attention with its writes
      if (auto it = table_.find(head->op_name()); it != table_.end() && it->second.lower(L_, head)) return;
      for (const ir::NodePtr& n : unit.nodes) lower_node(n);
      return;
    }
    lower_node(head);
  }

  void lower_node(const ir::NodePtr& node) {
    L_.set_current_node(node.get());
    if (auto it = table_.find(node->op_name());
        it != table_.end() && it->second.lower != nullptr && it->second.lower(L_, node)) {
      return;
    }
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
    L_.emit(L_.steps().fallback(*node, std::move(in_ops), std::move(in_types), std::move(out_ops)), ins, outs);
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
    L_.emit(compiled_->step(c, std::move(in_ops), std::move(out_ops)), ins, outs);
  }

  const ir::Graph& graph_;
  const BackendLowering& backend_;
  const LoweringTable& table_;
  const LowerOptions& options_;
  const std::unordered_map<const ir::Node*, int32_t>& original_constants_;
  Lowering L_;
  OwnerMap owners_;
  std::vector<lower::Cluster> clusters_;
  std::unique_ptr<CompiledClusters> compiled_;
  int32_t max_kernel_args_ = 0;
  std::string workaround_;
};

}  // namespace

std::unique_ptr<Program> lower_graph(const ir::Graph& graph, const BackendLowering& backend,
                                     const LowerOptions& options,
                                     const std::unordered_map<const ir::Node*, int32_t>& original_constants) {
  // Each kernel that reads a fill then holds it as a literal, with no kernel of its own.
  const ir::Graph split = passes::fill_per_use().run(graph);
  return GraphLowerer(split, backend, options, original_constants).run();
}

}  // namespace tessera::backends::common
