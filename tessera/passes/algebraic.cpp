// algebraic_simplify: identities that hold exactly in floating point, and shape-op chains that collapse.
// Every rule produces a value of exactly the replaced type; where the identity operand widens the
// shape (x + zeros[4, 3] with x [3]) the result is broadcast_to(x), and where it would change the
// dtype (f32 x + f64 0) the rule does not apply. x * 0 is folded only for integer and bool x: for
// floats it is NaN for NaN and inf.
#include <cmath>
#include <numeric>

#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

namespace {

using detail::accept;
using detail::Rewriter;
using ir::Value;
using Replacement = std::optional<std::vector<Value>>;

Value node1(const std::string& op, std::vector<Value> inputs, ir::Attrs attrs = {}) {
  return ir::make_node1(op, std::move(inputs), std::move(attrs));
}

bool is_reduction_with_axes(const std::string& op) {
  return op == "sum" || op == "mean" || op == "max" || op == "min" || op == "prod" || op == "logsumexp";
}

// Whether every value of `from` converts to `to` and back unchanged, so that a round trip through
// `to` is the identity and cast(cast(x, to), d) equals cast(x, d).
bool lossless(DType from, DType to) {
  if (from == to) return true;
  switch (from) {
    case DType::boolean:
      return true;
    case DType::u8:
    case DType::i8:
      // Both fit every wider integer and every float (bf16 has 8 significant bits); not bool.
      return to == DType::i32 || to == DType::i64 || is_floating(to);
    case DType::i32:
      return to == DType::i64 || to == DType::f64;
    case DType::f16:
    case DType::bf16:
      return to == DType::f32 || to == DType::f64;
    case DType::f32:
      return to == DType::f64;
    default:
      return false;
  }
}

class Simplifier {
 public:
  explicit Simplifier(const Rewriter& rw) : rw_(rw) {}

  Replacement simplify(const ir::Node& node, const std::vector<Value>& in) {
    if (node.num_outputs() != 1) return std::nullopt;
    if (Replacement r = simplify_op(node, in)) return r;
    if (node.op().has(ir::kElementwise) && in.size() >= 2)
      return drop_operand_broadcasts(node, in, node.output_types()[0]);
    return std::nullopt;
  }

 private:
  Replacement simplify_op(const ir::Node& node, const std::vector<Value>& in) {
    const std::string& op = node.op_name();
    const ir::TensorType& out = node.output_types()[0];
    if (op == "add") return simplify_add(in, out);
    if (op == "sub") return simplify_sub(in, out);
    if (op == "mul") return simplify_mul(in, out);
    if (op == "div") return simplify_div(in, out);
    if (op == "pow") return simplify_pow(in, out);
    if (op == "neg") {
      if (const ir::Node* inner = rw_.producer(in[0], "neg")) return accept(inner->input(0), out);
      return std::nullopt;
    }
    if (op == "permute") return simplify_permute(node, in, out);
    if (op == "reshape") return simplify_reshape(in, out);
    if (op == "broadcast_to") return simplify_broadcast(in, out);
    if (op == "cast") return simplify_cast(in, out);
    if (op == "slice") {
      if (node.attrs().get_int("step") == 1) return accept(in[0], out);  // the whole axis
      return std::nullopt;
    }
    if (op == "concat" && in.size() == 1) return accept(in[0], out);
    if (is_reduction_with_axes(op) && op != "logsumexp") return simplify_trivial_reduction(node, in, out);
    return std::nullopt;
  }

  bool is(const Value& v, double value) const {
    const std::optional<double> s = detail::splat_value(rw_, v);
    return s && *s == value;
  }

  // x + 0, 0 + x, x + (-y) -> x - y.
  Replacement simplify_add(const std::vector<Value>& in, const ir::TensorType& out) {
    for (int i = 0; i < 2; ++i) {
      const Value& x = in[static_cast<size_t>(i)];
      const Value& other = in[static_cast<size_t>(1 - i)];
      if (is(other, 0.0)) {
        if (Replacement r = accept(detail::as_type(x, out), out)) return r;
      }
      if (const ir::Node* negated = rw_.producer(other, "neg")) {
        if (Replacement r = accept(node1("sub", {x, negated->input(0)}), out)) return r;
      }
    }
    return std::nullopt;
  }

  // x - 0, x - (-y) -> x + y.
  Replacement simplify_sub(const std::vector<Value>& in, const ir::TensorType& out) {
    if (is(in[1], 0.0)) {
      if (Replacement r = accept(detail::as_type(in[0], out), out)) return r;
    }
    if (const ir::Node* negated = rw_.producer(in[1], "neg"))
      return accept(node1("add", {in[0], negated->input(0)}), out);
    return std::nullopt;
  }

  // x * 1, 1 * x, x * -1 -> -x, (-x) * (-y) -> x * y, and x * 0 -> 0 for integer or bool x.
  Replacement simplify_mul(const std::vector<Value>& in, const ir::TensorType& out) {
    for (int i = 0; i < 2; ++i) {
      const Value& x = in[static_cast<size_t>(i)];
      const Value& other = in[static_cast<size_t>(1 - i)];
      if (is(other, 1.0)) {
        if (Replacement r = accept(detail::as_type(x, out), out)) return r;
      }
      if (is(other, -1.0) && x.type() == out && x.dtype() != DType::boolean) return accept(node1("neg", {x}), out);
      if (is(other, 0.0) && !is_floating(x.dtype())) {
        return accept(node1("full", {}, ir::Attrs{{"shape", out.shape}, {"value", 0.0}, {"dtype", out.dtype}}), out);
      }
    }
    const ir::Node* a = rw_.producer(in[0], "neg");
    const ir::Node* b = rw_.producer(in[1], "neg");
    if (a && b) return accept(node1("mul", {a->input(0), b->input(0)}), out);
    return std::nullopt;
  }

  // x / 1, and x / 2^k -> x * 2^-k (exact in binary floating point, and a multiply is cheaper).
  Replacement simplify_div(const std::vector<Value>& in, const ir::TensorType& out) {
    if (is(in[1], 1.0)) return accept(detail::as_type(in[0], out), out);
    const std::optional<double> c = detail::splat_value(rw_, in[1]);
    if (!c || !is_floating(in[0].dtype()) || !is_floating(in[1].dtype()) || !std::isfinite(*c) || *c == 0.0 ||
        *c == 1.0) {
      return std::nullopt;
    }
    int exponent = 0;
    if (std::frexp(std::abs(*c), &exponent) != 0.5 || exponent < -100 || exponent > 100) return std::nullopt;
    const Value inverse =
        node1("full", {}, ir::Attrs{{"shape", in[1].shape()}, {"value", 1.0 / *c}, {"dtype", in[1].dtype()}});
    return accept(node1("mul", {in[0], inverse}), out);
  }

  // x ** 1 -> x, x ** 2 -> square(x) for floating x.
  Replacement simplify_pow(const std::vector<Value>& in, const ir::TensorType& out) {
    if (is(in[1], 1.0)) return accept(detail::as_type(in[0], out), out);
    if (is(in[1], 2.0) && in[0].type() == out && is_floating(out.dtype)) return accept(node1("square", {in[0]}), out);
    return std::nullopt;
  }

  // The identity permutation is x; a permutation of a permutation is one permutation.
  Replacement simplify_permute(const ir::Node& node, const std::vector<Value>& in, const ir::TensorType& out) {
    std::vector<int64_t> axes = node.attrs().get_ints("axes");
    Value source = in[0];
    if (const ir::Node* inner = rw_.producer(in[0], "permute")) {
      const std::vector<int64_t>& first = inner->attrs().get_ints("axes");
      // out[j] = y[axes[j]] = x[first[axes[j]]]; axes are non-negative (the op requires it).
      std::vector<int64_t> combined(axes.size());
      for (size_t j = 0; j < axes.size(); ++j) combined[j] = first[static_cast<size_t>(axes[j])];
      axes = std::move(combined);
      source = inner->input(0);
    }
    std::vector<int64_t> identity(axes.size());
    std::iota(identity.begin(), identity.end(), int64_t{0});
    if (axes == identity) return accept(source, out);
    if (source == in[0]) return std::nullopt;
    return accept(node1("permute", {source}, ir::Attrs{{"axes", axes}}), out);
  }

  // reshape to the same shape is x; reshape chains collapse; reshape(keepdims reduction) that only
  // drops the kept axes becomes the reduction without keepdims.
  Replacement simplify_reshape(const std::vector<Value>& in, const ir::TensorType& out) {
    if (in[0].type() == out) return accept(in[0], out);
    if (const ir::Node* inner = rw_.producer(in[0], "reshape")) {
      const Value& x = inner->input(0);
      if (x.type() == out) return accept(x, out);
      return accept(node1("reshape", {x}, ir::Attrs{{"shape", out.shape}}), out);
    }
    const ir::Node* reduce = rw_.producer(in[0]);
    if (reduce && is_reduction_with_axes(reduce->op_name()) && reduce->attrs().get_bool("keepdims") &&
        rw_.uses(in[0]) == 1) {
      ir::Attrs attrs = reduce->attrs();
      attrs.set("keepdims", false);
      const Value flat = node1(reduce->op_name(), {reduce->input(0)}, std::move(attrs));
      if (flat.type() == out) return accept(flat, out);
    }
    return std::nullopt;
  }

  Replacement simplify_broadcast(const std::vector<Value>& in, const ir::TensorType& out) {
    if (in[0].type() == out) return accept(in[0], out);
    if (const ir::Node* inner = rw_.producer(in[0], "broadcast_to")) {
      return accept(node1("broadcast_to", {inner->input(0)}, ir::Attrs{{"shape", out.shape}}), out);
    }
    return std::nullopt;
  }

  // cast to the same dtype is x; a cast through a dtype that holds every value of x is skipped.
  Replacement simplify_cast(const std::vector<Value>& in, const ir::TensorType& out) {
    if (in[0].type() == out) return accept(in[0], out);
    if (const ir::Node* inner = rw_.producer(in[0], "cast")) {
      const Value& x = inner->input(0);
      if (!lossless(x.dtype(), in[0].dtype())) return std::nullopt;
      if (x.dtype() == out.dtype) return accept(x, out);
      return accept(node1("cast", {x}, ir::Attrs{{"dtype", out.dtype}}), out);
    }
    return std::nullopt;
  }

  // A reduction over axes of size 1 only (or of a scalar) moves no data: it is a reshape.
  Replacement simplify_trivial_reduction(const ir::Node& node, const std::vector<Value>& in,
                                         const ir::TensorType& out) {
    if (in[0].dtype() != out.dtype) return std::nullopt;  // sum of bool counts in i64
    std::vector<int64_t> axes;
    try {
      axes = normalize_axes(node.attrs().get_ints("axes"), in[0].rank(), node.op_name().c_str());
    } catch (const Error&) {
      return std::nullopt;
    }
    for (int64_t a : axes) {
      if (in[0].shape()[static_cast<size_t>(a)] != 1) return std::nullopt;
    }
    if (in[0].type() == out) return accept(in[0], out);
    return accept(node1("reshape", {in[0]}, ir::Attrs{{"shape", out.shape}}), out);
  }

  // An elementwise op broadcasts its operands itself: an operand that is broadcast_to(y) (a scalar
  // constant expanded for a gradient, say), or a reshape of a one-element y, can be y directly when
  // the result keeps its shape. The backend then sees the scalar rather than a materialised tensor.
  Replacement drop_operand_broadcasts(const ir::Node& node, const std::vector<Value>& in, const ir::TensorType& out) {
    std::vector<Value> inputs = in;
    bool changed = false;
    for (Value& v : inputs) {
      // Peel expansions one at a time while the result keeps its shape.
      for (const ir::Node* p = rw_.producer(v); p; p = rw_.producer(v)) {
        const bool expands = p->op_name() == "broadcast_to" || (p->op_name() == "reshape" && v.type().numel() == 1);
        if (!expands) break;
        const Value before = v;
        v = p->input(0);
        if (result_shape(inputs) != out.shape) {
          v = before;
          break;
        }
        changed = true;
      }
    }
    if (!changed) return std::nullopt;
    try {
      return accept(ir::make_node(node.op_name(), inputs, node.attrs())[0], out);
    } catch (const Error&) {
      return std::nullopt;
    }
  }

  static Shape result_shape(const std::vector<Value>& inputs) {
    Shape shape;
    for (const Value& v : inputs) {
      try {
        shape = broadcast_shapes(shape, v.shape(), "algebraic_simplify");
      } catch (const Error&) {
        return {-1};
      }
    }
    return shape;
  }

  const Rewriter& rw_;
};

}  // namespace

Pass algebraic_simplify() {
  return Pass{"algebraic_simplify", [](const ir::Graph& graph) {
                Rewriter rw(graph, "algebraic_simplify");
                Simplifier simplifier(rw);
                return rw.run([&](const ir::Node& node, const std::vector<Value>& inputs) {
                  return simplifier.simplify(node, inputs);
                });
              }};
}

}  // namespace tessera::passes
