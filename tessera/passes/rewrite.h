#pragma once
// The engine every pass is built on: walk the graph's nodes in topological order, let a rule look at
// each node with its inputs already rewritten, and rebuild only what changed. Untouched nodes are
// reused (same pointer), so a pass that finds nothing returns a graph made of the same nodes.
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"

namespace tessera::passes::detail {

class Rewriter {
 public:
  // A rule returns replacement values for every output of `node` (each of the same type as the
  // output it replaces), or nothing to keep the node as it is (on its rewritten inputs).
  using Rule =
      std::function<std::optional<std::vector<ir::Value>>(const ir::Node& node, const std::vector<ir::Value>& inputs)>;

  Rewriter(const ir::Graph& graph, std::string pass_name);

  // Applies `rule` once over the graph. Returns the input graph itself when nothing changed.
  ir::Graph run(const Rule& rule);

  // --- helpers for rules -------------------------------------------------------------------------
  // The node producing `v`, or null when `v` is bound as a graph input (rules never look behind one).
  const ir::Node* producer(const ir::Value& v) const;
  // As producer, but only when the producing op is `op`.
  const ir::Node* producer(const ir::Value& v, const std::string& op) const;
  // How many times `v` is used in the rewritten graph (estimated from the original graph's uses; a
  // value created by a rule during this walk counts as used once). Rules use it to avoid duplicating
  // work that another consumer still needs.
  int uses(const ir::Value& v) const;
  // Uses of an output of an original node (`node` as handed to the rule) in the original graph.
  int original_uses(const ir::Node& node, int output) const;
  // `node` on `inputs`: the node itself when the inputs are unchanged, otherwise a copy on the new ones.
  std::vector<ir::Value> keep(const ir::Node& node, const std::vector<ir::Value>& inputs) const;
  // As keep, returning the node.
  ir::NodePtr keep_node(const ir::Node& node, const std::vector<ir::Value>& inputs) const;
  const std::string& pass_name() const { return pass_name_; }

 private:
  ir::NodePtr current_node(const ir::Node& node) const;
  void count_original_uses() const;

  const ir::Graph& graph_;
  std::string pass_name_;
  std::unordered_set<ir::Value, ir::ValueHash> bound_;
  ir::NodePtr current_;                                                              // the node being visited
  std::unordered_map<ir::Value, ir::Value, ir::ValueHash> mapped_;                   // original -> replacement
  std::unordered_map<ir::Value, std::vector<ir::Value>, ir::ValueHash> redirected_;  // replacement -> originals
  // Counted on the first question about uses: most passes never ask.
  mutable bool uses_counted_ = false;
  mutable std::unordered_map<ir::Value, int, ir::ValueHash> old_uses_;
};

// --- matching helpers shared by the passes ----------------------------------------------------------

// The single value every element of `v` holds, when `v` is a constant (up to a size limit), a `full`,
// or a reshape/broadcast_to of one; nothing otherwise (a graph input is never a splat).
std::optional<double> splat_value(const Rewriter& rw, const ir::Value& v);
// True when `v` is computed from constants and generators alone (no graph input, no random op).
bool is_constant_like(const Rewriter& rw, const ir::Value& v);
// `x` as a value of type `to`: x itself, or broadcast_to(x) when only the shape grows. Nothing when
// the dtype differs or the shapes do not broadcast.
std::optional<ir::Value> as_type(const ir::Value& x, const ir::TensorType& to);
// A rewrite's replacement: `v` when it is defined and of exactly `type`, nothing otherwise (a rule
// returns this so that a candidate of another type never replaces a node).
std::optional<std::vector<ir::Value>> accept(const std::optional<ir::Value>& v, const ir::TensorType& type);
// True when `from` broadcasts to exactly `to` (NumPy rules).
bool broadcasts_to(const Shape& from, const Shape& to);
// True when a and b are the same graph (the same nodes in the same order, the same outputs).
bool same_graph(const ir::Graph& a, const ir::Graph& b);

}  // namespace tessera::passes::detail
