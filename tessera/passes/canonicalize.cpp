// canonicalize: one spelling for computations that mean the same, so that the later passes need to
// match only that spelling and CSE sees a+b and b+a as equal. Commutative ops take a constant operand
// second and otherwise put the later-defined operand first (by node id); axis attributes are
// normalised (non-negative, sorted, "all axes" spelled out).
#include <array>
#include <string_view>

#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

namespace {

using detail::Rewriter;

bool is_commutative(const std::string& op) {
  static constexpr std::array<std::string_view, 8> kOps = {"add", "mul", "maximum",     "minimum",
                                                           "eq",  "ne",  "logical_and", "logical_or"};
  for (std::string_view name : kOps) {
    if (op == name) return true;
  }
  return false;
}

// Ops whose Int attribute "axis" refers to an axis of input 0 and accepts negative values.
bool has_input_axis(const std::string& op) {
  static constexpr std::array<std::string_view, 11> kOps = {"softmax", "log_softmax", "argmax",        "argmin",
                                                            "cumsum",  "concat",      "gather",        "index_select",
                                                            "slice",   "scatter_add", "slice_backward"};
  for (std::string_view name : kOps) {
    if (op == name) return true;
  }
  return false;
}

// Reductions whose Ints attribute "axes" (empty = all) refers to input 0.
bool has_reduce_axes(const std::string& op) {
  static constexpr std::array<std::string_view, 6> kOps = {"sum", "mean", "max", "min", "prod", "logsumexp"};
  for (std::string_view name : kOps) {
    if (op == name) return true;
  }
  return false;
}

// Orders operands by where they are defined, the later-defined first: x + bias rather than bias + x,
// since parameters and inputs are defined before what is computed from them. Any fixed order would
// do for CSE; this one reads naturally.
bool operand_before(const ir::Value& a, const ir::Value& b) {
  if (a.node()->id() != b.node()->id()) return a.node()->id() > b.node()->id();
  return a.index() > b.index();
}

std::optional<std::vector<ir::Value>> rebuild(const ir::Node& node, std::vector<ir::Value> inputs, ir::Attrs attrs) {
  try {
    std::vector<ir::Value> outs = ir::make_node(node.op_name(), std::move(inputs), std::move(attrs));
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].type() != node.output_types()[i]) return std::nullopt;
    }
    return outs;
  } catch (const Error&) {
    return std::nullopt;  // an attribute form the op does not accept: leave the node alone
  }
}

std::optional<std::vector<ir::Value>> canonicalize_node(const Rewriter& rw, const ir::Node& node,
                                                        const std::vector<ir::Value>& inputs) {
  const std::string& op = node.op_name();
  if (is_commutative(op) && inputs.size() == 2) {
    const bool const0 = is_constant_like(rw, inputs[0]);
    const bool const1 = is_constant_like(rw, inputs[1]);
    const bool swap = const0 != const1 ? const0 : operand_before(inputs[1], inputs[0]);
    if (!swap) return std::nullopt;
    return rebuild(node, {inputs[1], inputs[0]}, node.attrs());
  }
  if (inputs.empty()) return std::nullopt;
  const int64_t rank = inputs[0].rank();
  if (has_input_axis(op) && node.attrs().has("axis")) {
    const int64_t axis = node.attrs().get_int("axis");
    if (axis >= 0 || axis < -rank) return std::nullopt;
    ir::Attrs attrs = node.attrs();
    attrs.set("axis", axis + rank);
    return rebuild(node, inputs, std::move(attrs));
  }
  if (has_reduce_axes(op) && node.attrs().has("axes")) {
    const std::vector<int64_t>& axes = node.attrs().get_ints("axes");
    std::vector<int64_t> normal;
    try {
      normal = normalize_axes(axes, rank, op.c_str());
    } catch (const Error&) {
      return std::nullopt;
    }
    if (normal == axes) return std::nullopt;
    ir::Attrs attrs = node.attrs();
    attrs.set("axes", normal);
    return rebuild(node, inputs, std::move(attrs));
  }
  return std::nullopt;
}

}  // namespace

Pass canonicalize() {
  return Pass{"canonicalize", [](const ir::Graph& graph) {
                Rewriter rw(graph, "canonicalize");
                return rw.run([&](const ir::Node& node, const std::vector<ir::Value>& inputs) {
                  return canonicalize_node(rw, node, inputs);
                });
              }};
}

}  // namespace tessera::passes
