#pragma once
// Compiled loop kernels for the CPU backend: the generated C of a graph's clusters goes into one
// translation unit, compiled once with the system C compiler into a shared object that is cached on
// disk by content hash ($TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera/kernels, else
// ~/.cache/tessera/kernels) and in memory. A compiler failure throws with the path of the generated
// source. Elementwise kernels whose contiguous outputs total at least TESSERA_JIT_STREAM_BYTES
// (default 16 MiB; "off" disables) write them with non-temporal stores (codegen/dialect.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/lower/fusion.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::backends::cpu {

// One runnable kernel. Buffers are contiguous row-major arrays with the types of the cluster's
// input/output values, in the cluster's order.
class LoopKernel {
 public:
  virtual ~LoopKernel() = default;
  virtual void run(const void* const* inputs, void* const* outputs, runtime::ThreadPool& pool) const = 0;
  virtual const std::string& name() const = 0;
};

struct JitStats {
  bool from_disk_cache = false;
  bool from_memory_cache = false;
  double compile_ms = 0;  // time spent in the system compiler (0 on a cache hit)
  std::string source_path;
};

// Generates, compiles (or loads from cache) and returns one kernel per cluster, in order.
std::vector<std::shared_ptr<const LoopKernel>> compile_clusters(const std::vector<lower::Cluster>& clusters,
                                                                JitStats* stats = nullptr);

// The C translation unit compile_clusters builds for these clusters (what TESSERA_DUMP_KERNELS=1 prints).
std::string generate_source(const std::vector<lower::Cluster>& clusters);

// Forgets the in-memory cache; kernels already returned stay valid. The next compile of the same
// source loads the shared object from the disk cache (for tests and benchmarks).
void clear_memory_cache();

}  // namespace tessera::backends::cpu
