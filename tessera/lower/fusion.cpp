// find_clusters: greedy fusion in topological order. Each eligible node tries to join the clusters
// of its producers (all of them at once, then each alone); a merge is kept only when the merged
// cluster lowers to one loop kernel (build_loop_kernel succeeds) and creates no cycle with the rest
// of the graph. A reduction's result read back over the reduction's own input domain (RMSNorm's
// x * rsqrt(mean(x^2) + eps)) joins it as a row kernel (loop_ir.h) when the reduced axes are the
// innermost ones (the loop IR's condition) and a row holds at most kMaxRowElements elements (ours:
// the second walk over the row should find it in cache, and on GPUs one group of threads walks a row
// alone, which long rows would leave to too few threads). With RowKernelRules::chain_reductions, a
// reduction of values that use another's result joins it too, as a chained walk (LayerNorm's
// variance around the mean, softmax's sum of exp(x - max): each one kernel). Without, a node of plain
// arithmetic that feeds another reduction of its own size through plain arithmetic does not join a
// row phase: LayerNorm's x - mean is then computed in the variance's body and again in its row
// phase, instead of being stored by the first kernel and read twice by the second; math calls are
// worth storing rather than computing twice (softmax's exp(x - max) is stored by the max's row phase;
// measured on the CPU JIT, whose exp is a libm call). Generators without inputs (`full`) join their consumers' cluster afterwards when all
// consumers are in one.
#include "tessera/lower/fusion.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/op_def.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::lower {

namespace {

// A kernel this large gains nothing more from fusion, while its C source, compile time and the
// recursive lowering of its expression tree keep growing: longer chains are cut into several kernels.
constexpr size_t kMaxClusterNodes = 256;

// The longest row a row kernel walks twice: 64 KB of f32, within any L2 (an LLM's hidden size is 2K-16K).
constexpr int64_t kMaxRowElements = 16384;

class Clusterer {
 public:
  Clusterer(const ir::Graph& graph, const std::function<bool(const ir::Node&)>& eligible, RowKernelRules rules)
      : graph_(graph), rules_(rules) {
    const auto& nodes = graph.nodes();
    n_ = nodes.size();
    for (size_t i = 0; i < n_; ++i) index_[nodes[i].get()] = static_cast<int>(i);
    producers_.resize(n_);
    consumers_.resize(n_);
    eligible_.resize(n_);
    cluster_of_.assign(n_, -1);
    for (size_t i = 0; i < n_; ++i) {
      for (const ir::Value& v : nodes[i]->inputs()) {
        const int p = producer(v);
        if (p < 0) continue;
        producers_[i].push_back(p);
        consumers_[static_cast<size_t>(p)].push_back(static_cast<int>(i));
      }
      eligible_[i] = eligible(*nodes[i]);
      if (eligible_[i]) {
        TESSERA_CHECK(can_generate(*nodes[i], /*half_types=*/true),
                      "find_clusters: node {} ('{}', {}) is eligible but cannot be generated", i, nodes[i]->op_name(),
                      ir::type_str(nodes[i]->output_types()[0]));
      }
    }
    for (auto& list : producers_) dedupe(list);
    for (auto& list : consumers_) dedupe(list);
    for (const ir::Value& v : graph.outputs()) graph_outputs_.insert(v);
  }

  std::vector<Cluster> run() {
    std::vector<int> generators;
    for (size_t i = 0; i < n_; ++i) {
      if (!eligible_[i]) continue;
      if (graph_.nodes()[i]->inputs().empty()) {
        generators.push_back(static_cast<int>(i));
        continue;
      }
      place(static_cast<int>(i));
    }
    for (int g : generators) place_generator(g);
    return ordered_clusters();
  }

 private:
  static void dedupe(std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  int producer(const ir::Value& v) const {
    if (graph_.is_input(v)) return -1;
    auto it = index_.find(v.node().get());
    return it == index_.end() ? -1 : it->second;
  }

  void place(int i) {
    std::vector<int> producer_clusters;
    for (int p : producers_[static_cast<size_t>(i)]) {
      if (cluster_of_[static_cast<size_t>(p)] >= 0) producer_clusters.push_back(cluster_of_[static_cast<size_t>(p)]);
    }
    dedupe(producer_clusters);
    std::vector<std::vector<int>> attempts;
    if (producer_clusters.size() > 1) attempts.push_back(producer_clusters);
    std::sort(producer_clusters.begin(), producer_clusters.end(), [&](int a, int b) {
      return members_[static_cast<size_t>(a)].size() > members_[static_cast<size_t>(b)].size();
    });
    for (int c : producer_clusters) attempts.push_back({c});
    for (const auto& attempt : attempts) {
      size_t size = 1;
      for (int c : attempt) size += members_[static_cast<size_t>(c)].size();
      if (size > kMaxClusterNodes) continue;
      const bool stays_uniform = plain_elementwise(i) && all_uniform(attempt, node_shape(i));
      if (!acyclic(i, attempt)) continue;
      // Members stay sorted: each cluster's list is, and i comes after every node placed so far.
      std::vector<int> merged;
      for (int c : attempt) {
        const auto& m = members_[static_cast<size_t>(c)];
        std::vector<int> both;
        std::merge(merged.begin(), merged.end(), m.begin(), m.end(), std::back_inserter(both));
        merged.swap(both);
      }
      merged.push_back(i);
      if (stays_uniform || lowers(merged, i)) {
        commit(merged, attempt, stays_uniform);
        return;
      }
    }
    commit({i}, {}, plain_elementwise(i));
  }

  const Shape& node_shape(int i) const { return graph_.nodes()[static_cast<size_t>(i)]->output_types()[0].shape; }

  // An elementwise op that is not a view: computed at the identity map of its own shape.
  bool plain_elementwise(int i) const {
    const ir::Node& n = *graph_.nodes()[static_cast<size_t>(i)];
    return n.op().has(ir::kElementwise) && !n.op().has(ir::kView) && !n.op().has(ir::kReduction);
  }

  // A cluster of plain elementwise ops that all have one shape always lowers (every node at the
  // identity map of that shape, outside inputs broadcast), so growing it needs no trial lowering:
  // this keeps long chains linear instead of quadratic.
  bool all_uniform(const std::vector<int>& clusters, const Shape& shape) const {
    for (int c : clusters) {
      const auto& u = uniform_[static_cast<size_t>(c)];
      if (!u || *u != shape) return false;
    }
    return true;
  }

  void place_generator(int g) {
    std::vector<int> consumer_clusters;
    bool all_clustered = !graph_outputs_.count(ir::Value(graph_.nodes()[static_cast<size_t>(g)], 0));
    for (int c : consumers_[static_cast<size_t>(g)]) {
      const int cl = cluster_of_[static_cast<size_t>(c)];
      if (cl < 0) all_clustered = false;
      consumer_clusters.push_back(cl);
    }
    dedupe(consumer_clusters);
    if (all_clustered && consumer_clusters.size() == 1) {
      std::vector<int> merged = members_[static_cast<size_t>(consumer_clusters[0])];
      merged.push_back(g);
      std::sort(merged.begin(), merged.end());
      if (lowers(merged)) {  // a node without inputs cannot close a cycle
        commit(merged, consumer_clusters);
        return;
      }
    }
    commit({g}, {});
  }

  // Replaces the clusters `absorbed` by one cluster holding `members`.
  void commit(const std::vector<int>& members, const std::vector<int>& absorbed, bool uniform = false) {
    int id;
    if (absorbed.empty()) {
      id = static_cast<int>(members_.size());
      members_.emplace_back();
      uniform_.emplace_back();
    } else {
      id = *std::min_element(absorbed.begin(), absorbed.end());
      for (int c : absorbed) members_[static_cast<size_t>(c)].clear();
    }
    members_[static_cast<size_t>(id)] = members;
    uniform_[static_cast<size_t>(id)] =
        uniform ? std::optional<Shape>(node_shape(members.back())) : std::optional<Shape>();
    for (int m : members) cluster_of_[static_cast<size_t>(m)] = id;
  }

  // The unit (a cluster, or a lone node) a node belongs to, for cycle checks.
  std::vector<int> unit_members(int node) const {
    const int c = cluster_of_[static_cast<size_t>(node)];
    return c >= 0 ? members_[static_cast<size_t>(c)] : std::vector<int>{node};
  }

  // Whether node i joined with the clusters `attempt` closes no cycle: no path may leave the merged
  // set and come back. Walk backwards from the set's outside inputs through other units (whole
  // clusters at a time) and fail on reaching a unit that consumes from the set. With one cluster only
  // i's inputs can start such a path (the cluster alone was acyclic), which keeps chains linear.
  bool acyclic(int i, const std::vector<int>& attempt) const {
    auto in_set = [&](int p) {
      const int c = cluster_of_[static_cast<size_t>(p)];
      return p == i || (c >= 0 && std::find(attempt.begin(), attempt.end(), c) != attempt.end());
    };
    int lo = i;
    for (int c : attempt) lo = std::min(lo, members_[static_cast<size_t>(c)].front());
    std::unordered_set<int> visited;
    std::vector<int> stack;
    auto push_inputs = [&](int m) {
      for (int p : producers_[static_cast<size_t>(m)]) {
        if (!in_set(p) && !visited.count(p)) stack.push_back(p);
      }
    };
    push_inputs(i);
    if (attempt.size() > 1) {
      for (int c : attempt) {
        for (int m : members_[static_cast<size_t>(c)]) push_inputs(m);
      }
    }
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      if (visited.count(x)) continue;
      const std::vector<int> unit = unit_members(x);
      for (int m : unit) visited.insert(m);
      if (unit.back() < lo) continue;  // entirely before the set: cannot depend on it
      for (int m : unit) {
        for (int p : producers_[static_cast<size_t>(m)]) {
          if (in_set(p)) return false;
        }
      }
      for (int m : unit) push_inputs(m);
    }
    return true;
  }

  // Whether the cluster lowers to one kernel that fusion accepts; `joining` is the node being placed.
  bool lowers(const std::vector<int>& members, int joining = -1) const {
    try {
      const Kernel k = build_loop_kernel(make_cluster(members));
      if (!k.has_row_phase()) return true;
      if (!rules_.row_kernels || k.work_per_unit() > kMaxRowElements) return false;
      if (k.work_per_unit() > rules_.max_row_elements && k.range() > rules_.few_rows) return false;
      if (rules_.chain_reductions) return true;
      return k.chained.empty() && (joining < 0 || !cheaply_feeds_reduction_of_its_size(joining));
    } catch (const Error&) {
      return false;
    }
  }

  // Ops that cost about a load to compute again: arithmetic without math calls, and views.
  bool cheap_to_recompute(int i) const {
    static const std::unordered_set<std::string> cheap = {
        "add", "sub", "mul", "neg", "square", "abs", "cast", "maximum", "minimum", "where",
        "reshape", "broadcast_to", "permute", "slice", "flip", "stop_gradient"};
    return cheap.count(graph_.nodes()[static_cast<size_t>(i)]->op_name()) != 0;
  }

  // Whether node i is cheap to recompute and reaches an eligible reduction over as many elements as
  // it has through eligible consumers of its size that are cheap too (asked only of merges that make
  // a row phase).
  bool cheaply_feeds_reduction_of_its_size(int i) const {
    if (!cheap_to_recompute(i)) return false;
    const int64_t numel = shape_numel(node_shape(i));
    std::vector<int> stack(consumers_[static_cast<size_t>(i)].begin(), consumers_[static_cast<size_t>(i)].end());
    std::unordered_set<int> seen;
    while (!stack.empty()) {
      const int c = stack.back();
      stack.pop_back();
      if (!eligible_[static_cast<size_t>(c)] || !seen.insert(c).second) continue;
      const ir::Node& n = *graph_.nodes()[static_cast<size_t>(c)];
      if (n.op().has(ir::kReduction)) {
        if (shape_numel(n.input(0).shape()) == numel) return true;
        continue;
      }
      // A broadcast or a slice walks another row; a math call is worth storing.
      if (shape_numel(node_shape(c)) != numel || !cheap_to_recompute(c)) continue;
      for (int next : consumers_[static_cast<size_t>(c)]) stack.push_back(next);
    }
    return false;
  }

 public:
  Cluster make_cluster(const std::vector<int>& members) const {
    Cluster c;
    std::unordered_set<int> in(members.begin(), members.end());
    std::unordered_set<ir::Value, ir::ValueHash> seen_inputs;
    for (int m : members) {
      const ir::NodePtr& node = graph_.nodes()[static_cast<size_t>(m)];
      c.nodes.push_back(node);
      for (const ir::Value& v : node->inputs()) {
        const int p = producer(v);
        if ((p < 0 || !in.count(p)) && seen_inputs.insert(v).second) c.inputs.push_back(v);
      }
    }
    for (int m : members) {
      const ir::NodePtr& node = graph_.nodes()[static_cast<size_t>(m)];
      for (int k = 0; k < node->num_outputs(); ++k) {
        const ir::Value v(node, k);
        bool used_outside = graph_outputs_.count(v) > 0;
        for (int consumer : consumers_[static_cast<size_t>(m)]) {
          if (in.count(consumer)) continue;
          for (const ir::Value& u : graph_.nodes()[static_cast<size_t>(consumer)]->inputs()) used_outside |= u == v;
        }
        if (used_outside) c.outputs.push_back(v);
      }
    }
    return c;
  }

 private:
  // Clusters in an order that respects every dependency, through unclustered nodes too (Kahn's
  // algorithm over units, smallest first node first).
  std::vector<Cluster> ordered_clusters() const {
    const size_t num_clusters = members_.size();
    auto unit_of = [&](size_t node) {
      const int c = cluster_of_[node];
      return c >= 0 ? static_cast<size_t>(c) : num_clusters + node;
    };
    const size_t units = num_clusters + n_;
    std::vector<std::vector<size_t>> succ(units);
    std::vector<int> indegree(units, 0);
    std::vector<size_t> first(units, SIZE_MAX);
    std::vector<bool> live(units, false);
    for (size_t i = 0; i < n_; ++i) {
      const size_t u = unit_of(i);
      live[u] = true;
      first[u] = std::min(first[u], i);
      for (int p : producers_[i]) {
        const size_t pu = unit_of(static_cast<size_t>(p));
        if (pu != u) succ[pu].push_back(u);
      }
    }
    for (auto& s : succ) {
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
      for (size_t u : s) ++indegree[u];
    }
    using Item = std::pair<size_t, size_t>;  // (first node, unit)
    std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
    for (size_t u = 0; u < units; ++u) {
      if (live[u] && indegree[u] == 0) ready.emplace(first[u], u);
    }
    std::vector<Cluster> out;
    while (!ready.empty()) {
      const size_t u = ready.top().second;
      ready.pop();
      if (u < num_clusters) out.push_back(make_cluster(members_[u]));
      for (size_t s : succ[u]) {
        if (--indegree[s] == 0) ready.emplace(first[s], s);
      }
    }
    return out;
  }

  const ir::Graph& graph_;
  RowKernelRules rules_;
  size_t n_ = 0;
  std::unordered_map<const ir::Node*, int> index_;
  std::vector<std::vector<int>> producers_, consumers_;
  std::vector<bool> eligible_;
  std::vector<int> cluster_of_;
  std::vector<std::vector<int>> members_;      // by cluster id; emptied when absorbed
  std::vector<std::optional<Shape>> uniform_;  // by cluster id: the shape of an all-plain-elementwise cluster
  std::unordered_set<ir::Value, ir::ValueHash> graph_outputs_;
};

}  // namespace

std::vector<Cluster> find_clusters(const ir::Graph& graph, const std::function<bool(const ir::Node&)>& eligible,
                                   RowKernelRules rules) {
  return Clusterer(graph, eligible, rules).run();
}

}  // namespace tessera::lower
