// Cluster eligibility and formation, and unit scheduling, for lower_graph.
#include "tessera/backends/common/fusion_plan.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tessera/lower/loop_ir.h"

namespace tessera::backends::common {

OwnerMap epilogue_owners(const ir::Graph& graph, const EpilogueMap& epilogues) {
  OwnerMap owners;
  for (const ir::NodePtr& n : graph.nodes()) {
    if (auto it = epilogues.find(n.get()); it != epilogues.end()) {
      for (const ir::Node* absorbed : it->second.nodes) owners[absorbed] = n.get();
    }
  }
  return owners;
}

std::unordered_set<const ir::Node*> cluster_eligible(const ir::Graph& graph, const LoweringTable& table,
                                                     const EpilogueMap& epilogues, const OwnerMap& owners,
                                                     bool half_types) {
  std::unordered_set<const ir::Node*> eligible;
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users;
  for (const ir::NodePtr& n : graph.nodes()) {
    for (const ir::Value& in : n->inputs()) users[in.node().get()].push_back(n.get());
  }
  std::unordered_set<const ir::Node*> graph_output_nodes;
  for (const ir::Value& v : graph.outputs()) graph_output_nodes.insert(v.node().get());
  const std::vector<ir::NodePtr>& nodes = graph.nodes();
  // Consumers first, so that a view sees whether all its consumers were taken.
  for (size_t i = nodes.size(); i-- > 0;) {
    const ir::Node& n = *nodes[i];
    if (n.is_leaf() || owners.count(&n) != 0 || epilogues.count(&n) != 0) continue;
    auto entry = table.find(n.op_name());
    if (entry != table.end() && entry->second.over_jit && entry->second.claims(n)) continue;
    if (!lower::can_generate(n, half_types)) continue;
    if (n.op().has(ir::kView)) {
      if (graph_output_nodes.count(&n) != 0) continue;
      bool all = true;
      for (const ir::Node* u : users[&n]) all = all && eligible.count(u) != 0;
      if (!all || users[&n].empty()) continue;
    }
    eligible.insert(&n);
  }
  return eligible;
}

std::vector<lower::Cluster> form_clusters(const ir::Graph& graph, const std::unordered_set<const ir::Node*>& eligible,
                                          FusionSet fusion, const lower::RowKernelRules& rules) {
  if (fusion.has(Fusion::clusters)) {
    return lower::find_clusters(graph, [&](const ir::Node& n) { return eligible.count(&n) != 0; }, rules);
  }
  std::vector<lower::Cluster> clusters;
  for (const ir::NodePtr& n : graph.nodes()) {
    if (eligible.count(n.get()) != 0) clusters.push_back(single_node_cluster(n));
  }
  return clusters;
}

lower::Cluster single_node_cluster(const ir::NodePtr& n) {
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

int64_t cluster_work(const std::vector<lower::Cluster>& clusters) {
  int64_t work = 0;
  for (const lower::Cluster& c : clusters) {
    for (const ir::NodePtr& n : c.nodes) work += n->output_types()[0].numel();
  }
  return work;
}

namespace {

bool loop_kernel_builds(const lower::Cluster& c) {
  try {
    lower::build_loop_kernel(c);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::vector<lower::Cluster> generatable(const std::vector<lower::Cluster>& clusters) {
  std::vector<lower::Cluster> kept;
  for (const lower::Cluster& c : clusters) {
    if (loop_kernel_builds(c)) {
      kept.push_back(c);
      continue;
    }
    for (const ir::NodePtr& n : c.nodes) {
      lower::Cluster single = single_node_cluster(n);
      if (loop_kernel_builds(single)) kept.push_back(std::move(single));
    }
  }
  return kept;
}

namespace {

// For each value a cluster's nodes read, the index of the last node that reads it.
using LastReads = std::unordered_map<ir::Value, size_t, ir::ValueHash>;
LastReads last_reads(const lower::Cluster& c) {
  LastReads last;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    for (const ir::Value& in : c.nodes[i]->inputs()) last[in] = i;
  }
  return last;
}

// Nodes [begin, end) of cluster c as a cluster of their own: it reads what they read from outside the
// run, and yields what c yields or its later nodes read.
lower::Cluster run_of(const lower::Cluster& c, const LastReads& last, size_t begin, size_t end) {
  lower::Cluster run;
  run.nodes.assign(c.nodes.begin() + static_cast<std::ptrdiff_t>(begin), c.nodes.begin() + static_cast<std::ptrdiff_t>(end));
  std::unordered_set<const ir::Node*> inside;
  for (const ir::NodePtr& n : run.nodes) inside.insert(n.get());
  for (const ir::NodePtr& n : run.nodes) {
    for (const ir::Value& in : n->inputs()) {
      if (inside.count(in.node().get()) == 0 && std::find(run.inputs.begin(), run.inputs.end(), in) == run.inputs.end()) {
        run.inputs.push_back(in);
      }
    }
  }
  for (const ir::NodePtr& n : run.nodes) {
    for (int i = 0; i < n->num_outputs(); ++i) {
      const ir::Value v(n, i);
      const auto read = last.find(v);
      if (std::find(c.outputs.begin(), c.outputs.end(), v) != c.outputs.end() ||
          (read != last.end() && read->second >= end)) {
        run.outputs.push_back(v);
      }
    }
  }
  return run;
}

size_t buffers_of(const lower::Cluster& c) { return c.inputs.size() + c.outputs.size(); }

}  // namespace

std::vector<lower::Cluster> within_buffer_limit(const std::vector<lower::Cluster>& clusters, int max_buffers) {
  if (max_buffers <= 0) return clusters;
  const auto limit = static_cast<size_t>(max_buffers);
  std::vector<lower::Cluster> kept;
  for (const lower::Cluster& c : clusters) {
    if (buffers_of(c) <= limit) {
      kept.push_back(c);
      continue;
    }
    // Consecutive runs of the cluster's nodes (topological order: no run waits on a later one), each
    // as long as its buffers allow.
    const LastReads last = last_reads(c);
    for (size_t begin = 0; begin < c.nodes.size();) {
      size_t end = begin + 1;
      lower::Cluster run = run_of(c, last, begin, end);
      while (end < c.nodes.size()) {
        lower::Cluster longer = run_of(c, last, begin, end + 1);
        if (buffers_of(longer) > limit) break;
        run = std::move(longer);
        ++end;
      }
      kept.push_back(std::move(run));
      begin = end;
    }
  }
  return kept;
}

Units make_units(const ir::Graph& graph, const LoweringTable& table, const OwnerMap& owners,
                 const std::vector<lower::Cluster>& clusters, bool group) {
  Units out;
  std::vector<Unit>& units = out.units;
  std::unordered_map<const ir::Node*, int>& unit_of = out.unit_of;
  std::unordered_map<const ir::Node*, int> cluster_of;
  for (size_t c = 0; c < clusters.size(); ++c) {
    for (const ir::NodePtr& n : clusters[c].nodes) cluster_of[n.get()] = static_cast<int>(c);
  }
  std::vector<int> cluster_unit(clusters.size(), -1);
  std::unordered_map<std::string, int> group_unit;
  for (const ir::NodePtr& n : graph.nodes()) {
    if (n->is_leaf()) continue;
    if (auto entry = table.find(n->op_name());
        entry != table.end() && entry->second.group_key != nullptr && entry->second.claims(*n)) {
      const std::string key = n->op_name() + "|" + (group ? entry->second.group_key(*n) : std::to_string(n->id()));
      auto [it, fresh] = group_unit.emplace(key, static_cast<int>(units.size()));
      if (fresh) units.push_back(Unit{{}, -1, true});
      units[static_cast<size_t>(it->second)].nodes.push_back(n);
      unit_of[n.get()] = it->second;
      continue;
    }
    if (auto it = owners.find(n.get()); it != owners.end()) {
      // Its owner's unit, made here when the owner comes later (an attention taking its cache writes).
      const auto [owner, fresh] = unit_of.emplace(it->second, static_cast<int>(units.size()));
      const int u = owner->second;  // before unit_of grows again
      if (fresh) units.push_back(Unit{{}, -1, false});
      units[static_cast<size_t>(u)].nodes.push_back(n);
      unit_of[n.get()] = u;
      continue;
    }
    if (auto it = unit_of.find(n.get()); it != unit_of.end()) {  // an owner whose absorbed nodes came first
      units[static_cast<size_t>(it->second)].nodes.push_back(n);
      continue;
    }
    if (auto it = cluster_of.find(n.get()); it != cluster_of.end()) {
      int& u = cluster_unit[static_cast<size_t>(it->second)];
      if (u < 0) {
        u = static_cast<int>(units.size());
        units.push_back(Unit{{}, it->second, false});
      }
      units[static_cast<size_t>(u)].nodes.push_back(n);
      unit_of[n.get()] = u;
      continue;
    }
    unit_of[n.get()] = static_cast<int>(units.size());
    units.push_back(Unit{{n}, -1, false});
  }
  return out;
}

std::optional<std::vector<Unit>> schedule_units(const ir::Graph& graph, Units plan) {
  std::vector<Unit>& units = plan.units;
  const std::unordered_set<ir::Value, ir::ValueHash> inputs(graph.inputs().begin(), graph.inputs().end());
  const size_t n = units.size();
  std::vector<std::vector<int>> dependents(n);
  std::vector<int> pending(n, 0);
  for (size_t u = 0; u < n; ++u) {
    std::unordered_set<int> deps;
    for (const ir::NodePtr& node : units[u].nodes) {
      for (const ir::Value& in : node->inputs()) {
        if (inputs.count(in) != 0) continue;
        auto it = plan.unit_of.find(in.node().get());
        if (it != plan.unit_of.end() && it->second != static_cast<int>(u)) deps.insert(it->second);
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

}  // namespace tessera::backends::common
