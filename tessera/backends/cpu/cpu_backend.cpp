// The CPU backend's compile(): the pass pipeline, lowering to a Program, and an in-process cache of
// Programs keyed by graph structure (ops, attributes, wiring, types; constants by type only), so
// that a graph rebuilt with new data (an eager training loop) reuses the plan and its kernels.
#include "tessera/backends/cpu/cpu_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <unordered_map>

#include "tessera/backends/cpu/compile_options.h"
#include "tessera/backends/cpu/compiler_driver.h"
#include "tessera/backends/cpu/executable.h"
#include "tessera/backends/cpu/lower.h"
#include "tessera/backends/internal_error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/passes/pass.h"

namespace tessera::backends {
namespace cpu {
namespace {

JitMode initial_jit_mode() {
  const char* env = std::getenv("TESSERA_JIT");
  if (env == nullptr || *env == '\0') return JitMode::automatic;
  if (std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0) return JitMode::off;
  if (std::strcmp(env, "1") == 0 || std::strcmp(env, "on") == 0) return JitMode::always;
  return JitMode::automatic;
}

std::atomic<JitMode>& jit_slot() {
  static std::atomic<JitMode> slot{initial_jit_mode()};
  return slot;
}

bool dump_programs() {
  static const bool on = [] {
    const char* env = std::getenv("TESSERA_DUMP");
    return env != nullptr && (std::strcmp(env, "all") == 0 || std::strstr(env, "cpu") != nullptr);
  }();
  return on;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The structure of a graph as text, and its constants (by position) with the bytes of the small ones.
struct GraphKey {
  std::string structure;
  std::string small_constants;
  std::vector<const ir::Node*> constants;
};

void append_type(std::string& out, const ir::TensorType& t) {
  out += dtype_name(t.dtype);
  out += shape_str(t.shape);
}

GraphKey graph_key(const ir::Graph& graph, const LowerOptions& options, const PassSelection& passes) {
  GraphKey k;
  std::string& s = k.structure;
  s.reserve(64 * (graph.nodes().size() + 1));
  fmt::format_to(std::back_inserter(s), "jit{}:{} fusion{} passes{}|", static_cast<int>(options.jit),
                 options.jit_min_elements, options.fusion.bits(), passes.str());
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

struct CacheEntry {
  std::shared_ptr<const Program> program;
  bool value_dependent = false;  // the passes rewrote the graph: small constants must match too
  std::string small_constants;
  CompileInfo info;
};

struct PlanCache {
  std::mutex mutex;
  std::unordered_map<std::string, CacheEntry> entries;
};

PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

constexpr size_t kMaxCachedPlans = 512;

// The graph with every input bound to a fresh placeholder. Eager evaluation binds computed values
// (often constants) as inputs; the passes must not see through them, or a plan cached for this
// structure would keep one run's data (a learning rate folded into a constant, say).
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

CompileInfo info_of(const Program& p) {
  CompileInfo info;
  const ProgramStats& s = p.stats;
  info.passes_ms = s.passes_ms;
  info.lower_ms = s.lower_ms;
  info.cluster_ms = s.cluster_ms;
  info.jit_ms = s.jit_ms;
  info.jit_used = s.jit_used;
  info.library_steps = s.library_steps;
  info.kernel_steps = s.kernel_steps;
  info.fallback_steps = s.fallback_steps;
  info.copy_steps = s.copy_steps;
  info.views = s.views;
  info.in_place = s.in_place;
  info.fallback_ops = s.fallback_ops;
  info.peak_bytes = p.arena_bytes;
  return info;
}

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string status() const override;
  // Every op runs: what has no library call or generated kernel runs on its reference kernel.
  bool supports(const ir::Node& node) const override { return static_cast<bool>(node.op().reference); }

  using Backend::compile;
  std::unique_ptr<Executable> compile(const ir::Graph& graph, const CompileSpec& spec) override {
    check_aliases(graph, spec.aliases);
    const auto t0 = std::chrono::steady_clock::now();
    const CompileOptions selected = compile_options();
    LowerOptions options;
    options.jit = jit_mode();
    options.fusion = selected.fusion;
    GraphKey key = graph_key(graph, options, selected.passes);
    std::shared_ptr<const Program> program;
    CompileInfo info;
    {
      PlanCache& cache = plan_cache();
      std::lock_guard<std::mutex> lock(cache.mutex);
      auto it = cache.entries.find(key.structure);
      if (it != cache.entries.end() &&
          (!it->second.value_dependent || it->second.small_constants == key.small_constants)) {
        program = it->second.program;
        info = it->second.info;
        info.plan_cache_hit = true;
      }
    }
    if (!program) {
      std::unordered_map<const ir::Node*, int32_t> original;
      for (size_t i = 0; i < key.constants.size(); ++i) original.emplace(key.constants[i], static_cast<int32_t>(i));
      const auto tp = std::chrono::steady_clock::now();
      const ir::Graph sealed = with_placeholder_inputs(graph);
      ir::Graph optimized = run_passes(sealed, selected.passes);
      const double passes_ms = ms_since(tp);
      std::unique_ptr<Program> lowered;
      try {
        lowered = lower_graph(optimized, options, original);
      } catch (const LoweringFault& fault) {
        raise_internal_error({"cpu", fault.what(), &sealed, same_nodes(sealed, optimized) ? nullptr : &optimized,
                              fault.node(), fault.workaround()});
      }
      lowered->stats.passes_ms = passes_ms;
      if (dump_programs()) std::fprintf(stderr, "%s", lowered->dump().c_str());
      info = info_of(*lowered);
      program = std::move(lowered);
      CacheEntry entry{program, !same_nodes(sealed, optimized), key.small_constants, info};
      PlanCache& cache = plan_cache();
      std::lock_guard<std::mutex> lock(cache.mutex);
      if (cache.entries.size() >= kMaxCachedPlans) cache.entries.clear();
      cache.entries.insert_or_assign(std::move(key.structure), std::move(entry));
    }
    std::vector<Array> constants;
    constants.reserve(program->constants.size());
    for (const ConstantSource& c : program->constants) {
      if (c.derived_from >= 0) {  // derived slots come after their sources
        constants.push_back(c.derive(constants[static_cast<size_t>(c.derived_from)]));
        continue;
      }
      constants.push_back(c.original >= 0
                              ? key.constants[static_cast<size_t>(c.original)]->attrs().get_tensor("value").contiguous()
                              : c.owned);
    }
    info.total_ms = ms_since(t0);
    return std::make_unique<CpuExecutable>(graph, std::move(program), std::move(constants), std::move(info),
                                           spec.aliases);
  }

 private:
  static ir::Graph run_passes(const ir::Graph& graph, const PassSelection& selection) {
    if (selection.all_off) return graph;
    const passes::Pipeline& all = passes::default_pipeline();
    passes::Pipeline chosen;
    for (const passes::Pass& pass : all.passes()) {
      if (std::find(selection.disabled.begin(), selection.disabled.end(), pass.name) == selection.disabled.end()) {
        chosen.add(pass);
      }
    }
    chosen.repeat(all.max_rounds());
    try {
      return chosen.run(graph);
    } catch (const std::exception& e) {
      raise_internal_error({"cpu", fmt::format("the pass pipeline failed: {}", e.what()), &graph, nullptr, nullptr,
                            "TESSERA_PASSES=0 (or -NAME for the pass named above)"});
    }
  }
};

std::string CpuBackend::status() const {
  const CompilerCommand& cc = compiler_command();
  return fmt::format("available: {} threads, {}, kernel compiler: {}", runtime::default_pool().size(),
                     kernels::use_avx2() ? "AVX2/FMA kernels" : "portable kernels (no AVX2/FMA)",
                     cc.version.empty() ? cc.text() : cc.version);
}

const CpuExecutable& as_cpu(const Executable& exe) {
  const auto* cpu = dynamic_cast<const CpuExecutable*>(&exe);
  TESSERA_CHECK(cpu != nullptr, "cpu backend: this executable was not compiled by the cpu backend");
  return *cpu;
}

}  // namespace

void set_jit_mode(JitMode mode) {
  jit_slot().store(mode);
}
JitMode jit_mode() {
  return jit_slot().load();
}

CompileInfo compile_info(const Executable& exe) {
  CompileInfo info = as_cpu(exe).info();
  info.program = as_cpu(exe).program().dump();
  return info;
}
const Program& program_of(const Executable& exe) {
  return as_cpu(exe).program();
}

void clear_plan_cache() {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.entries.clear();
}

size_t plan_cache_size() {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.entries.size();
}

}  // namespace cpu

Backend& cpu_backend() {
  static cpu::CpuBackend backend;
  return backend;
}

}  // namespace tessera::backends
