// stable_rewrites: replaces formulas that lose precision or overflow with the fused ops that do not.
//   log(1 + x), log(x + 1)            -> log1p(x)       (log(1 + 1e-10) is 0 in f32; log1p is 1e-10)
//   exp(x) - 1, exp(x) + (-1)         -> expm1(x)
//   log(exp(x))                       -> x              (exp(x) overflows for x > 88 in f32)
//   log(softmax(x))                   -> log_softmax(x) (softmax underflows to 0, log(0) = -inf)
//   log(pick(softmax(x)))             -> pick(log_softmax(x)), pick = any chain of ops that only move
//                                        elements (gather, index_select, reshape, permute, slice, ...)
//   log(sum(softmax(x) * one_hot(t))) -> gather(log_softmax(x), t): the probability of the target
//   log(sum(exp(x)))                  -> logsumexp(x)   (same axes and keepdims)
// With log(softmax) gone, a hand-written softmax + NLL loss is the graph ops::cross_entropy builds.
// Rewrites that would compute an intermediate twice (softmax and log_softmax, exp and expm1) apply
// only when nothing else uses the intermediate; log1p and log(exp) replace one op by one and always
// apply.
#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

namespace {

using detail::accept;
using detail::Rewriter;
using ir::Value;
using Replacement = std::optional<std::vector<Value>>;

// Ops that only copy or move elements, with the data in input 0: log(op(p)) = op(log(p)).
bool moves_elements(const std::string& op) {
  return op == "reshape" || op == "permute" || op == "broadcast_to" || op == "slice" || op == "flip" ||
         op == "gather" || op == "index_select";
}

class StableRewriter {
 public:
  explicit StableRewriter(const Rewriter& rw) : rw_(rw) {}

  Replacement rewrite(const ir::Node& node, const std::vector<Value>& in) {
    if (node.num_outputs() != 1 || in.empty() || !is_floating(node.output_types()[0].dtype)) return std::nullopt;
    const ir::TensorType& out = node.output_types()[0];
    const std::string& op = node.op_name();
    if (op == "log") return rewrite_log(in[0], out);
    if (op == "sub" && is(in[1], 1.0)) return expm1_of(in[0], out);
    if (op == "add") {
      if (is(in[1], -1.0)) return expm1_of(in[0], out);
      if (is(in[0], -1.0)) return expm1_of(in[1], out);
    }
    return std::nullopt;
  }

 private:
  bool is(const Value& v, double value) const {
    const std::optional<double> s = detail::splat_value(rw_, v);
    return s && *s == value;
  }

  // exp(x) - 1 where the subtraction keeps exp(x)'s type (up to broadcasting).
  Replacement expm1_of(const Value& e, const ir::TensorType& out) {
    const ir::Node* exp = rw_.producer(e, "exp");
    if (!exp || rw_.uses(e) != 1 || e.dtype() != out.dtype) return std::nullopt;
    return accept(detail::as_type(ir::make_node1("expm1", {exp->input(0)}), out), out);
  }

  Replacement rewrite_log(const Value& arg, const ir::TensorType& out) {
    const ir::Node* p = rw_.producer(arg);
    if (!p) return std::nullopt;
    const std::string& op = p->op_name();
    if (op == "exp") return accept(p->input(0), out);
    if (op == "add") {
      for (int i = 0; i < 2; ++i) {
        const Value& x = p->input(static_cast<size_t>(i));
        if (!is(p->input(static_cast<size_t>(1 - i)), 1.0)) continue;
        const std::optional<Value> y = detail::as_type(x, out);  // x itself, or x broadcast by the add
        if (y) return accept(ir::make_node1("log1p", {*y}), out);
      }
      return std::nullopt;
    }
    if (op == "sum") {
      if (Replacement r = logsumexp_of(*p, arg, out)) return r;
      return target_log_probability(*p, arg, out);
    }
    return log_of_moved_softmax(arg, out);
  }

  // log(M1(M2(...softmax(x)))) -> M1(M2(...log_softmax(x))), every intermediate used only here.
  Replacement log_of_moved_softmax(const Value& arg, const ir::TensorType& out) {
    std::vector<const ir::Node*> chain;
    Value v = arg;
    for (const ir::Node* p = rw_.producer(v); p && moves_elements(p->op_name()); p = rw_.producer(v)) {
      if (rw_.uses(v) != 1) return std::nullopt;
      chain.push_back(p);
      v = p->input(0);
    }
    const ir::Node* softmax = rw_.producer(v, "softmax");
    if (!softmax || rw_.uses(v) != 1) return std::nullopt;
    Value result = ir::make_node1("log_softmax", {softmax->input(0)}, softmax->attrs());
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      std::vector<Value> inputs = (*it)->inputs();
      inputs[0] = result;
      result = ir::make_node1((*it)->op_name(), std::move(inputs), (*it)->attrs());
    }
    return accept(result, out);
  }

  // log(sum(exp(x), axes, keepdims)) -> logsumexp(x, axes, keepdims).
  Replacement logsumexp_of(const ir::Node& sum, const Value& sum_value, const ir::TensorType& out) {
    const ir::Node* exp = rw_.producer(sum.input(0), "exp");
    if (!exp || rw_.uses(sum.input(0)) != 1 || rw_.uses(sum_value) != 1) return std::nullopt;
    return accept(ir::make_node1("logsumexp", {exp->input(0)}, sum.attrs()), out);
  }

  // log(sum(softmax(z, a) * one_hot(t), {a})) with the classes on the last axis: the log-probability
  // of each target, gathered from log_softmax(z) (a naive cross-entropy written by hand).
  Replacement target_log_probability(const ir::Node& sum, const Value& sum_value, const ir::TensorType& out) {
    const ir::Node* mul = rw_.producer(sum.input(0), "mul");
    if (!mul || rw_.uses(sum_value) != 1 || rw_.uses(sum.input(0)) != 1) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const Value& probs = mul->input(static_cast<size_t>(i));
      const ir::Node* softmax = rw_.producer(probs, "softmax");
      const ir::Node* one_hot = rw_.producer(mul->input(static_cast<size_t>(1 - i)), "one_hot");
      if (!softmax || !one_hot || rw_.uses(probs) != 1) continue;
      const int64_t rank = probs.rank();
      const int64_t axis = softmax->attrs().get_int("axis");
      const int64_t class_axis = axis < 0 ? axis + rank : axis;
      std::vector<int64_t> axes;
      try {
        axes = normalize_axes(sum.attrs().get_ints("axes"), rank, "sum");
      } catch (const Error&) {
        return std::nullopt;
      }
      const Value& hot = mul->input(static_cast<size_t>(1 - i));
      if (class_axis != rank - 1 || axes != std::vector<int64_t>{class_axis} || hot.shape() != probs.shape() ||
          sum.input(0).type() != probs.type()) {
        continue;
      }
      const Value& targets = one_hot->input(0);
      Shape index_shape = targets.shape();
      index_shape.push_back(1);
      const Value index = ir::make_node1("reshape", {targets}, ir::Attrs{{"shape", index_shape}});
      const Value log_probs = ir::make_node1("log_softmax", {softmax->input(0)}, softmax->attrs());
      Value picked = ir::make_node1("gather", {log_probs, index}, ir::Attrs{{"axis", class_axis}});
      if (picked.type() != out) picked = ir::make_node1("reshape", {picked}, ir::Attrs{{"shape", out.shape}});
      return accept(picked, out);
    }
    return std::nullopt;
  }

  const Rewriter& rw_;
};

}  // namespace

Pass stable_rewrites() {
  return Pass{"stable_rewrites", [](const ir::Graph& graph) {
                Rewriter rw(graph, "stable_rewrites");
                StableRewriter rewriter(rw);
                return rw.run([&](const ir::Node& node, const std::vector<Value>& inputs) {
                  return rewriter.rewrite(node, inputs);
                });
              }};
}

}  // namespace tessera::passes
