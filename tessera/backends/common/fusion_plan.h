#pragma once
// The graph-level fusion plan every backend lowers by: which nodes may become generated kernels and
// how they are clustered, and the units of scheduling (single nodes, a product with its fused tail, a
// cluster, a group of nodes lowered as one step) ordered so that each runs after its inputs. Nothing
// here compiles or emits anything; lower_graph.h carries the plan out.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/common/lowering.h"
#include "tessera/ir/graph.h"
#include "tessera/lower/fusion.h"

namespace tessera::backends::common {

using EpilogueMap = std::unordered_map<const ir::Node*, Epilogue>;      // by matmul/conv node (epilogues.h)
using OwnerMap = std::unordered_map<const ir::Node*, const ir::Node*>;  // absorbed node -> its matmul/conv

OwnerMap epilogue_owners(const ir::Graph& graph, const EpilogueMap& epilogues);

// The nodes that may go into generated kernels: those the loop IR expresses (lower::can_generate),
// except leaves, epilogue heads and absorbed nodes, and nodes a library lowering of `table` claims
// over generated code. A view joins only when every consumer is generated code (otherwise it stays a
// free view) and it is no graph output.
std::unordered_set<const ir::Node*> cluster_eligible(const ir::Graph& graph, const LoweringTable& table,
                                                     const EpilogueMap& epilogues, const OwnerMap& owners,
                                                     bool half_types = false);

// The eligible nodes as clusters: lower::find_clusters (row kernels as `rules` allow), or one node each
// without Fusion::clusters.
std::vector<lower::Cluster> form_clusters(const ir::Graph& graph, const std::unordered_set<const ir::Node*>& eligible,
                                          FusionSet fusion, const lower::RowKernelRules& rules);
lower::Cluster single_node_cluster(const ir::NodePtr& node);
int64_t cluster_work(const std::vector<lower::Cluster>& clusters);  // elements the clusters compute
// The clusters the loop IR accepts; a rejected cluster is split into its nodes that it accepts alone.
std::vector<lower::Cluster> generatable(const std::vector<lower::Cluster>& clusters);
// The clusters with at most `max_buffers` inputs and outputs (0: any); a larger one is split into
// consecutive runs of its nodes, each as long as the limit allows.
std::vector<lower::Cluster> within_buffer_limit(const std::vector<lower::Cluster>& clusters, int max_buffers);

// A unit of scheduling: one node, a matmul/conv with its fused tail, a cluster for a generated kernel
// (cluster >= 0, an index into the clusters), or a group of nodes one lowering takes at once.
struct Unit {
  std::vector<ir::NodePtr> nodes;  // graph order
  int cluster = -1;
  bool group = false;
};

struct Units {
  std::vector<Unit> units;
  std::unordered_map<const ir::Node*, int> unit_of;  // every non-leaf node's unit
};

// Every non-leaf node in one unit. Nodes claimed by a grouping lowering of `table` share a unit per
// group key when `group` is set (one each otherwise); absorbed nodes join their owner's unit (a product's
// tail, the cache writes an attention takes over).
Units make_units(const ir::Graph& graph, const LoweringTable& table, const OwnerMap& owners,
                 const std::vector<lower::Cluster>& clusters, bool group);

// The units ordered so that each follows the producers of its inputs (Kahn's algorithm, keeping the
// graph's order wherever the dependencies allow); nothing if they form a cycle.
std::optional<std::vector<Unit>> schedule_units(const ir::Graph& graph, Units units);

}  // namespace tessera::backends::common
