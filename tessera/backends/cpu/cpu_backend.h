#pragma once
// The CPU backend: compiles a whole graph into a schedule of library calls (GEMM with fused
// epilogues, convolution, pooling, softmax, reductions), generated loop kernels for fused
// elementwise/reduction clusters, free views, and reference-kernel fallbacks for everything else,
// over one memory-planned arena. Compiled plans are cached by graph structure, so rebuilding the
// same graph (eager training loops do) costs a hash and a lookup.
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/backend.h"

namespace tessera::backends {

Backend& cpu_backend();

namespace common {
struct Program;
}

namespace cpu {

// When clusters of fusable ops become generated C kernels: never, always, or (the default) when
// the graph's fusable work is large enough to repay the compiler. $TESSERA_JIT=0|1|auto.
enum class JitMode { off, always, automatic };
void set_jit_mode(JitMode mode);
JitMode jit_mode();

// How an executable was made, for tests, benchmarks and `tessera bench`.
struct CompileInfo {
  // lower_ms excludes cluster_ms (finding fusion clusters) and jit_ms (generating/compiling/loading them).
  double total_ms = 0, passes_ms = 0, lower_ms = 0, cluster_ms = 0, jit_ms = 0;
  bool plan_cache_hit = false;
  bool jit_used = false;
  int library_steps = 0, kernel_steps = 0, fallback_steps = 0, copy_steps = 0, views = 0, in_place = 0;
  std::vector<std::string> fallback_ops;  // ops that run on their reference kernels
  int64_t peak_bytes = 0;
  std::string program;  // the schedule, one step per line
};

// Throws unless `exe` came from cpu_backend().compile.
CompileInfo compile_info(const Executable& exe);
const common::Program& program_of(const Executable& exe);

// The in-process cache of compiled plans keyed by graph structure.
void clear_plan_cache();
size_t plan_cache_size();

}  // namespace cpu
}  // namespace tessera::backends
