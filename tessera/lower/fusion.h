#pragma once
// Fusion: groups chains of elementwise/broadcast ops (and an elementwise chain feeding a reduction,
// and the uses of a reduction's result over its row) into clusters that become one generated loop
// kernel each.
#include <functional>
#include <vector>

#include "tessera/ir/graph.h"

namespace tessera::lower {

// A connected set of fusable nodes computed by one kernel. Inputs are values produced outside the
// cluster (or graph inputs); outputs are the cluster values used outside it or by the graph's outputs.
struct Cluster {
  std::vector<ir::NodePtr> nodes;  // topological order
  std::vector<ir::Value> inputs;
  std::vector<ir::Value> outputs;
};

// True when the loop IR can express the node (elementwise/broadcast/cast/select/simple reductions).
// f16/bf16 values only with `half_types`: the loop IR and the emitter handle them (stored as 16
// bits, computed in f32), but the CPU backend does not fuse them yet.
bool can_generate(const ir::Node& node, bool half_types = false);

// Partitions the nodes accepted by `eligible` (the backend's choice, typically: not a library call
// and can_generate) into clusters. Every eligible node lands in exactly one cluster; a cluster never
// creates a cycle with the rest of the graph; `rules` say which row kernels may form (loop_ir.h).
struct RowKernelRules {
  bool row_kernels = true;       // a reduction's result used over the reduced row joins the reduction
  bool chain_reductions = true;  // and so does a reduction of values that use it (softmax's sum after the max)
  int64_t max_row_elements = 16384;  // only over rows of at most this many elements,
  int64_t few_rows = 0;              // or over rows of any length when the kernel has at most this many
};
std::vector<Cluster> find_clusters(const ir::Graph& graph, const std::function<bool(const ir::Node&)>& eligible,
                                   RowKernelRules rules = {});

}  // namespace tessera::lower
