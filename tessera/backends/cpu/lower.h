#pragma once
// Graph -> Program for the CPU backend: the shared lowering (backends/common/lower_graph.h) with the
// CPU's library lowerings, host steps and C JIT.
#include <memory>
#include <unordered_map>

#include "tessera/backends/common/lowering.h"
#include "tessera/backends/cpu/cpu_backend.h"

namespace tessera::backends::cpu {

struct LowerOptions {
  JitMode jit = JitMode::automatic;
  // In automatic mode, graphs whose fusable work is smaller than this many elements skip code
  // generation (the system compiler would cost more than it saves).
  int64_t jit_min_elements = 1 << 15;
  common::FusionSet fusion = common::FusionSet::all();
};

// Throws LoweringFault (backends/common/lowering.h) on a bug of the lowering itself.
// `original_constants` numbers the constants of the graph as the user built it (before passes), so
// that the Program can be reused with another graph of the same structure and fresh constant data.
std::unique_ptr<common::Program> lower_graph(const ir::Graph& graph, const LowerOptions& options,
                                             const std::unordered_map<const ir::Node*, int32_t>& original_constants);

}  // namespace tessera::backends::cpu
