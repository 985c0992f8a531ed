#include "tessera/testing/graph_fuzz/shrink.h"

#include <unordered_map>
#include <unordered_set>

#include "tessera/backends/backend.h"
#include "tessera/ir/op_def.h"

namespace tessera::testing::fuzz {
namespace {

// The reference value of every value of the graph (inputs included).
std::unordered_map<ir::Value, Array, ir::ValueHash> all_values(const Case& c) {
  std::vector<ir::Value> wanted;
  for (const ir::NodePtr& n : c.graph.nodes()) {
    for (int i = 0; i < n->num_outputs(); ++i) wanted.emplace_back(n, i);
  }
  const ir::Graph everything = ir::Graph::build(c.graph.inputs(), wanted, c.graph.name());
  const std::vector<Array> data = backends::reference_backend().compile(everything)->run(c.inputs);
  std::unordered_map<ir::Value, Array, ir::ValueHash> out;
  for (size_t i = 0; i < wanted.size(); ++i) out.emplace(wanted[i], data[i]);
  for (size_t i = 0; i < c.graph.inputs().size(); ++i) out.emplace(c.graph.inputs()[i], c.inputs[i]);
  return out;
}

// Rebuilds the graph with the values in `cut` replaced by fresh inputs holding their data.
Case with_cuts(const Case& c, const std::vector<ir::Value>& cut,
               const std::unordered_map<ir::Value, Array, ir::ValueHash>& data) {
  std::unordered_map<ir::Value, ir::Value, ir::ValueHash> map;
  Case out;
  std::vector<ir::Value> inputs = c.graph.inputs();
  out.inputs = c.inputs;
  for (const ir::Value& v : cut) {
    const ir::Value in = ir::make_input(fmt::format("cut{}", inputs.size()), v.type());
    map.emplace(v, in);
    inputs.push_back(in);
    out.inputs.push_back(data.at(v));
  }
  // Nodes downstream of a cut are rebuilt on the new input; the rest are shared unchanged.
  const std::vector<ir::Value> outputs = ir::outputs_of(c.graph, ir::substitute(c.graph, std::move(map)));
  out.graph = ir::Graph::build(inputs, outputs, c.graph.name());
  out.exact = c.exact;
  return without_unused_inputs(out);
}

Case without_output(const Case& c, size_t k) {
  std::vector<ir::Value> outputs = c.graph.outputs();
  outputs.erase(outputs.begin() + static_cast<long>(k));
  Case out;
  out.graph = ir::Graph::build(c.graph.inputs(), outputs, c.graph.name());
  out.inputs = c.inputs;
  out.exact = c.exact;
  out.exact.erase(out.exact.begin() + static_cast<long>(k));
  return without_unused_inputs(out);
}

// Output k replaced by `v`, an operand of the node that computes it: drops what follows v. The new
// output is compared within tolerance (its exactness is not known).
Case retargeted(const Case& c, size_t k, const ir::Value& v) {
  std::vector<ir::Value> outputs = c.graph.outputs();
  outputs[k] = v;
  Case out;
  out.graph = ir::Graph::build(c.graph.inputs(), outputs, c.graph.name());
  out.inputs = c.inputs;
  out.exact = c.exact;
  out.exact[k] = false;
  return without_unused_inputs(out);
}

bool safe_fails(const std::function<bool(const Case&)>& fails, const Case& c) {
  try {
    return fails(c);
  } catch (const std::exception&) {
    return false;  // a candidate the oracle rejects is no simpler reproduction
  }
}

}  // namespace

Case without_unused_inputs(const Case& c) {
  std::unordered_set<ir::Value, ir::ValueHash> used;
  for (const ir::NodePtr& n : c.graph.nodes()) {
    for (const ir::Value& in : n->inputs()) used.insert(in);
  }
  for (const ir::Value& v : c.graph.outputs()) used.insert(v);
  Case out;
  std::vector<ir::Value> inputs;
  for (size_t i = 0; i < c.graph.inputs().size(); ++i) {
    if (!used.count(c.graph.inputs()[i])) continue;
    inputs.push_back(c.graph.inputs()[i]);
    out.inputs.push_back(c.inputs[i]);
  }
  out.graph = ir::Graph::build(inputs, c.graph.outputs(), c.graph.name());
  out.exact = c.exact;
  return out;
}

Case shrink(const Case& failing, const std::function<bool(const Case&)>& fails, int max_checks) {
  Case best = without_unused_inputs(failing);
  if (!safe_fails(fails, best)) best = failing;
  int checks = 0;
  bool progress = true;
  while (progress && checks < max_checks) {
    progress = false;
    // Fewer outputs.
    for (size_t k = best.graph.outputs().size(); k-- > 0 && best.graph.outputs().size() > 1 && checks < max_checks;) {
      Case candidate = without_output(best, k);
      ++checks;
      if (safe_fails(fails, candidate)) {
        best = std::move(candidate);
        progress = true;
      }
    }
    // Earlier values as outputs: what follows them goes.
    for (size_t k = 0; k < best.graph.outputs().size() && checks < max_checks; ++k) {
      const ir::Value out = best.graph.outputs()[k];
      if (best.graph.is_input(out) || out.node()->is_leaf()) continue;
      for (const ir::Value& in : out.node()->inputs()) {
        if (best.graph.is_input(in) || in.node()->is_leaf()) continue;
        Case candidate = retargeted(best, k, in);
        ++checks;
        if (safe_fails(fails, candidate)) {
          best = std::move(candidate);
          progress = true;
          break;
        }
      }
    }
    // Cuts, nearest the outputs first: a cut there removes the most.
    std::unordered_map<ir::Value, Array, ir::ValueHash> data;
    try {
      data = all_values(best);
    } catch (const std::exception&) {
      break;
    }
    const std::vector<ir::NodePtr> nodes = best.graph.nodes();
    std::unordered_set<ir::Value, ir::ValueHash> outputs(best.graph.outputs().begin(), best.graph.outputs().end());
    for (size_t i = nodes.size(); i-- > 0 && checks < max_checks;) {
      const ir::NodePtr& n = nodes[i];
      if (n->is_leaf()) continue;
      std::vector<ir::Value> cut;
      for (const ir::Value& in : n->inputs()) {
        if (!in.node()->is_leaf() && !best.graph.is_input(in) && !outputs.count(in)) cut.push_back(in);
      }
      if (cut.empty()) continue;
      // All of the node's computed operands at once, then each alone.
      std::vector<std::vector<ir::Value>> attempts{cut};
      if (cut.size() > 1) {
        for (const ir::Value& v : cut) attempts.push_back({v});
      }
      for (const auto& attempt : attempts) {
        bool present = true;  // an earlier cut of this round may have removed it
        for (const ir::Value& v : attempt) present = present && data.count(v) != 0;
        if (!present) continue;
        Case candidate;
        try {
          candidate = with_cuts(best, attempt, data);
        } catch (const std::exception&) {
          continue;
        }
        ++checks;
        if (safe_fails(fails, candidate)) {
          best = std::move(candidate);
          progress = true;
          break;
        }
      }
      if (progress) break;  // values changed identity: recompute the data and start again
    }
  }
  return best;
}

}  // namespace tessera::testing::fuzz
