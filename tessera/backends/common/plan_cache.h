#pragma once
// The in-process cache of compiled plans, keyed by graph structure (ops, attributes, wiring, types;
// constants by type only), so that a graph rebuilt with new data (an eager training loop) reuses the
// plan and its kernels. Any backend can keep one, for whatever it calls a plan.
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/graph.h"

namespace tessera::backends::common {

// The structure of a graph as text, and its constants (by position) with the bytes of the small ones.
struct GraphKey {
  std::string structure;
  std::string small_constants;
  std::vector<const ir::Node*> constants;  // topological order: what ConstantSource::original numbers
};

// The content hashes (kernel_cache.h) of the key's constants at `positions` (indices into
// key.constants), large ones too: the constants the passes folded away (a cast of a weight into a new constant, which the plan then
// keeps). Constants the plan binds at run time are left out: a model's weights are not read again.
std::string constants_digest(const GraphKey& key, const std::vector<size_t>& positions);
// The positions of the key's constants whose values the passes may have folded into the optimized
// graph: those it no longer reads, and those a replaced node computed from constants alone (a fold)
// was computed from. A weight that a rewritten product still reads where it lies is left out.
std::vector<size_t> folded_constants(const GraphKey& key, const ir::Graph& sealed, const ir::Graph& optimized);

// `settings` names whatever else changes the plan (fusions, passes, code generation), so that plans
// made under other settings never match.
GraphKey graph_key(const ir::Graph& graph, std::string_view settings);

// The graph with every input bound to a fresh placeholder. Eager evaluation binds computed values
// (often constants) as inputs; the passes must not see through them, or a plan cached for this
// structure would keep one run's data (a learning rate folded into a constant, say).
ir::Graph with_placeholder_inputs(const ir::Graph& graph);

// Whether two graphs are made of the very same nodes (the passes changed nothing).
bool same_nodes(const ir::Graph& a, const ir::Graph& b);

template <class Plan>
class PlanCache {
 public:
  explicit PlanCache(size_t capacity = 512) : capacity_(capacity) {}

  // The plan cached for the key's structure; for a value-dependent plan (a constant folded by the
  // passes or into a generated kernel's code), only when the constants it holds match too: the small
  // ones byte for byte, the folded ones (any size) by digest.
  std::optional<Plan> find(const GraphKey& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key.structure);
    if (it == entries_.end()) return std::nullopt;
    const Entry& e = it->second;
    if (e.value_dependent &&
        (e.small_constants != key.small_constants || e.digest != constants_digest(key, e.folded))) {
      return std::nullopt;
    }
    return e.plan;
  }

  // `value_dependent`: the plan holds values of the graph's small constants, not only their types:
  // the passes rewrote the graph (same_nodes was false), or the lowering baked them into code
  // (Program::holds_constant_values). When full, the cache starts over: a program rarely has more
  // live structures than that, and a sweep costs nothing.
  // `folded`: the positions of the constants the passes folded (folded_constants).
  void insert(const GraphKey& key, Plan plan, bool value_dependent, std::vector<size_t> folded = {}) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= capacity_) entries_.clear();
    std::string digest = value_dependent ? constants_digest(key, folded) : std::string();
    entries_.insert_or_assign(key.structure,
                              Entry{std::move(plan), value_dependent, key.small_constants, std::move(folded), std::move(digest)});
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    Plan plan;
    bool value_dependent = false;
    std::string small_constants;
    std::vector<size_t> folded;
    std::string digest;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  size_t capacity_;
};

}  // namespace tessera::backends::common
