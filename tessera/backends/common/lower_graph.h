#pragma once
// Graph -> Program, for any backend: epilogues are found first (epilogues.h), the remaining fusable
// nodes are grouped into clusters for generated kernels (fusion_plan.h), the units are ordered so that
// each runs after its inputs, and each is lowered in turn: by the backend's library lowerings, its
// generated kernels, or its reference-kernel fallback. A backend supplies what differs (BackendLowering below).
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/common/lowering.h"
#include "tessera/lower/fusion.h"

namespace tessera::backends::common {

// A graph's clusters compiled by a backend: makes the step that runs cluster `c`'s kernel on packed
// operands (the cluster's inputs and outputs, in its order). At most Program::max_kernel_args operands
// of each side; RunContext::kernel_inputs/kernel_outputs have room for them.
class CompiledClusters {
 public:
  virtual ~CompiledClusters() = default;
  virtual std::unique_ptr<Step> step(size_t c, std::vector<Operand> inputs, std::vector<Operand> outputs) const = 0;
};

// Compiles all clusters of one graph at once (one compiler run); throws when any cannot be compiled.
class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  virtual std::unique_ptr<CompiledClusters> compile(const std::vector<lower::Cluster>& clusters) const = 0;
};

// What a backend brings to the lowering. All must outlive lower_graph.
struct BackendLowering {
  std::string name;                      // in warnings: "tessera NAME backend: ..."
  const LoweringTable* table = nullptr;  // library lowerings by op name
  const StepFactory* steps = nullptr;
  const KernelCompiler* kernels = nullptr;  // null: no generated kernels
};

struct LowerOptions {
  FusionSet fusion = FusionSet::all();
  // Generated kernels only when the clusters compute at least this many elements (a compiler run
  // would cost small graphs more than it saves); 0: whenever there are clusters.
  int64_t min_generated_elements = 0;
  EpilogueLimits epilogue_limits;  // what the backend's matmul/conv lowerings fuse (with Fusion::epilogue)
  bool half_types = false;         // its generated kernels take f16/bf16 values (lower::can_generate)
  // Row kernels may chain reductions (lower::RowKernelRules): softmax and LayerNorm in one kernel.
  bool chain_reductions = true;
  int64_t max_row_kernel_elements = 16384;  // row kernels only over rows this short (RowKernelRules)
  int64_t few_row_kernel_rows = 0;           // or over at most this many rows of any length
  // The most buffers (inputs + outputs) one generated kernel may bind (0: any number); a fused cluster
  // over it is generated as runs of its nodes (a Vulkan shader's bindings are described in its push
  // constants).
  int max_kernel_buffers = 0;
  // The kv_cache_attention nodes whose lowering takes over the cache writes that feed them
  // (cache_appends.h); none when unset.
  std::function<bool(const ir::Node&)> folds_cache_writes;
};

// Throws LoweringFault (lowering.h) on a bug of the lowering itself, naming the node and the switch
// that avoids the failing part. `original_constants` numbers the constants of the graph as the user
// built it (before passes), so that the Program can be reused with another graph of the same structure
// and fresh constant data.
std::unique_ptr<Program> lower_graph(const ir::Graph& graph, const BackendLowering& backend,
                                     const LowerOptions& options,
                                     const std::unordered_map<const ir::Node*, int32_t>& original_constants);

}  // namespace tessera::backends::common
