// The CPU backend's compile(): the pass pipeline, lowering to a Program, and an in-process cache of
// Programs keyed by graph structure (backends/common/plan_cache.h), so that a graph rebuilt with new
// data (an eager training loop) reuses the plan and its kernels.
#include "tessera/backends/cpu/cpu_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "tessera/backends/common/compile_profile.h"
#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/common/plan_cache.h"
#include "tessera/backends/cpu/compiler_driver.h"
#include "tessera/backends/cpu/executable.h"
#include "tessera/backends/cpu/lower.h"
#include "tessera/backends/internal_error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/runtime/thread_pool.h"

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

// Said once per process: without a C compiler the CPU backend still runs every graph, more slowly.
void notify_no_compiler() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::fprintf(stderr,
                 "tessera: note: no C compiler for generated kernels ('%s' did not run; set TESSERA_CC to one): the "
                 "cpu backend runs those ops on its library and reference kernels, which is slower\n",
                 compiler_command().program.front().c_str());
  });
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

// What the plan cache holds per graph structure.
struct CpuPlan {
  std::shared_ptr<const common::Program> program;
  CompileInfo info;
};

common::PlanCache<CpuPlan>& plan_cache() {
  static common::PlanCache<CpuPlan> cache;
  return cache;
}

// Everything besides the graph that changes the plan.
std::string plan_settings(const LowerOptions& options, const common::PassSelection& passes) {
  return fmt::format("jit{}:{} fusion{} passes{}", static_cast<int>(options.jit), options.jit_min_elements,
                     options.fusion.bits(), passes.str());
}

CompileInfo info_of(const common::Program& p) {
  CompileInfo info;
  const common::ProgramStats& s = p.stats;
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
    const common::CompileProfile profile("cpu compile");
    const auto t0 = std::chrono::steady_clock::now();
    const common::CompileOptions selected = common::compile_options();
    LowerOptions options;
    options.jit = jit_mode();
    if (options.jit != JitMode::off && !compiler_available()) {
      notify_no_compiler();
      options.jit = JitMode::off;
    }
    options.fusion = selected.fusion;
    const common::GraphKey key = common::graph_key(graph, plan_settings(options, selected.passes));
    std::optional<CpuPlan> plan = plan_cache().find(key);
    if (plan) {
      plan->info.plan_cache_hit = true;
    } else {
      std::unordered_map<const ir::Node*, int32_t> original;
      for (size_t i = 0; i < key.constants.size(); ++i) original.emplace(key.constants[i], static_cast<int32_t>(i));
      const auto tp = std::chrono::steady_clock::now();
      const ir::Graph sealed = common::with_placeholder_inputs(graph);
      ir::Graph optimized = [&] {
        const common::CompilePhase phase("passes");
        return common::run_selected_passes(sealed, selected.passes, "cpu");
      }();
      const double passes_ms = ms_since(tp);
      std::unique_ptr<common::Program> lowered;
      try {
        lowered = lower_graph(optimized, options, original);
      } catch (const common::LoweringFault& fault) {
        raise_internal_error({"cpu", fault.what(), &sealed,
                              common::same_nodes(sealed, optimized) ? nullptr : &optimized, fault.node(),
                              fault.workaround()});
      }
      lowered->stats.passes_ms = passes_ms;
      if (dump_programs()) std::fprintf(stderr, "%s", lowered->dump().c_str());
      CompileInfo info = info_of(*lowered);
      plan = CpuPlan{std::move(lowered), std::move(info)};
      // Value-dependent when the passes rewrote the graph (folded a constant, say), generated kernels
      // hold constants as literals, or an epilogue was chosen from a constant's value (ReLU6's bounds):
      // then it serves only graphs whose small constants are these.
      const bool value_dependent = !common::same_nodes(sealed, optimized) || plan->program->holds_constant_values ||
                                   plan->program->reads_constant_values;
      plan_cache().insert(key, *plan, value_dependent,
                          value_dependent ? common::folded_constants(key, sealed, optimized) : std::vector<size_t>{});
    }
    std::vector<Array> constants = common::bind_constants(*plan->program, key.constants);
    plan->info.total_ms = ms_since(t0);
    return std::make_unique<CpuExecutable>(graph, std::move(plan->program), std::move(constants), std::move(plan->info),
                                           spec.aliases);
  }
};

std::string CpuBackend::status() const {
  const CompilerCommand& cc = compiler_command();
  const std::string compiler =
      compiler_available() ? cc.version
                           : fmt::format("none ('{}' did not run; set TESSERA_CC): no generated kernels", cc.program.front());
  const char* kernel_set = kernels::use_avx2()             ? "AVX2/FMA kernels"
                           : kernels::x86_kernels_built() ? "portable kernels (no AVX2/FMA)"
                                                          : "portable kernels (built without x86 kernels)";
  return fmt::format("available: {} threads, {}, kernel compiler: {}", runtime::default_pool().size(), kernel_set,
                     compiler);
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
const common::Program& program_of(const Executable& exe) {
  return as_cpu(exe).program();
}

void clear_plan_cache() {
  plan_cache().clear();
}

size_t plan_cache_size() {
  return plan_cache().size();
}

}  // namespace cpu

Backend& cpu_backend() {
  static cpu::CpuBackend backend;
  return backend;
}

}  // namespace tessera::backends
