#pragma once
// OpDef: everything about one op, declared once — its attribute schema, shape/dtype inference
// (mandatory), gradient rule, traits, reference implementation and optional decomposition. Op families
// register their OpDefs in tessera/ops/*.cpp; nothing else needs to change to add an op.
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/node.h"

namespace tessera::ir {

// Properties passes and backends may rely on, as bits of OpDef::traits (test with OpDef::has).
enum OpTrait : uint32_t {
  kElementwise = 1u << 0,  // output[i] depends only on inputs[i] (after broadcasting)
  kReduction = 1u << 1,    // combines elements along axes (sum, max, ...)
  kView = 1u << 2,      // output may alias the input's storage (reshape, permute, slice, ...)
  kFusable = 1u << 3,   // may join a generated loop kernel
  kInPlace = 1u << 4,   // output may reuse input 0's buffer
  kLeaf = 1u << 5,      // input/constant: has identity, never merged by CSE
  kRandom = 1u << 6,    // draws random numbers: never merged or folded
};

// One attribute an op takes: its name and kind.
struct AttrSpec {
  std::string name;      // the key in Attrs
  AttrKind kind;         // the value's type, checked when a node is made
  bool required = true;  // false: the attribute may be absent (the op then uses its default)
};

// What a gradient rule sees: the node, its inputs and outputs, and the cotangent of each output
// (undefined Values for outputs that received none). It returns one cotangent per input, undefined
// where the input gets no gradient (integer indices, masks, ...).
struct VjpContext {
  const Node& node;                // the node being differentiated
  std::vector<Value> inputs;       // its inputs (primal values)
  std::vector<Value> outputs;      // its outputs (primal values)
  std::vector<Value> cotangents;   // one per output; undefined where that output got no gradient
  const Attrs& attrs() const { return node.attrs(); }  // the node's attributes
  const Value& input(size_t i) const { return inputs.at(i); }  // input i (throws std::out_of_range past the end)
  const Value& output(size_t i = 0) const { return outputs.at(i); }  // output i
  const Value& cotangent(size_t i = 0) const { return cotangents.at(i); }  // the cotangent of output i
};

// Shape and dtype inference: the output types for these input types and attributes; throws tessera::Error
// (op_fail) on inputs the op does not accept.
using InferFn = std::function<std::vector<TensorType>(const std::vector<TensorType>& inputs, const Attrs& attrs)>;
// The gradient rule: one cotangent per input, built as graph values (so gradients are differentiable again).
using VjpFn = std::function<std::vector<Value>(const VjpContext& ctx)>;
// The plain host implementation: computes fresh output arrays of the inferred `outputs` types.
using ReferenceFn = std::function<std::vector<Array>(const std::vector<Array>& inputs, const Attrs& attrs,
                                                     const std::vector<TensorType>& outputs)>;
// Rewrites the op in terms of simpler ops: values of the same types as the op's outputs.
using DecomposeFn = std::function<std::vector<Value>(const std::vector<Value>& inputs, const Attrs& attrs)>;

// One op, declared once: attributes, inference, gradient, traits, reference and decomposition.
struct OpDef {
  std::string name;    // unique in the registry; what the IR text and ops:: functions call it
  int min_inputs = 0;  // the fewest inputs a node of this op may have
  int max_inputs = 0;  // -1: variadic
  std::vector<AttrSpec> attrs;  // every attribute the op takes; others are rejected
  uint32_t traits = 0;          // OpTrait bits
  InferFn infer;          // mandatory
  ReferenceFn reference;  // mandatory: the reference backend's implementation
  VjpFn vjp;              // empty: not differentiable
  DecomposeFn decompose;  // optional: the op in terms of simpler ops

  bool has(OpTrait t) const { return (traits & t) != 0; }  // whether trait `t` is set
};

// Every op by name; ops:: functions and the parser look ops up here.
class OpRegistry {
 public:
  static OpRegistry& instance();  // every op family registered on first use
  void add(OpDef def);            // throws if the name is taken or the definition is incomplete
  const OpDef* find(const std::string& name) const;  // null when no op has that name
  const OpDef& get(const std::string& name) const;  // throws naming the unknown op
  std::vector<std::string> names() const;           // sorted

 private:
  OpRegistry() = default;
  std::vector<std::unique_ptr<OpDef>> defs_;
  std::unordered_map<std::string, const OpDef*> by_name_;
};

// Formats "op 'name' with inputs (f32[2, 3], i64[4]): <message>" for shape rules and kernels.
std::string describe_op(const std::string& op, const std::vector<TensorType>& inputs);
// Throws tessera::Error with describe_op(op, inputs) before the formatted message.
template <class... Args>
[[noreturn]] void op_fail(const std::string& op, const std::vector<TensorType>& inputs,
                          fmt::format_string<Args...> f, Args&&... args) {
  fail("{}: {}", describe_op(op, inputs), fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace tessera::ir
