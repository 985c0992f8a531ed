#pragma once
// Appends scalar instructions to one phase of a kernel, with local value numbering (an identical
// instruction is emitted once) and small folds. Op lowering (op_lowering.cpp) and the kernel builder
// speak to the IR only through this class.
#include <map>
#include <string>
#include <vector>

#include "tessera/ir/node.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::lower {

class ScalarCode {
 public:
  explicit ScalarCode(std::vector<Instr>& instrs) : instrs_(instrs) {}

  ScalarType type(int x) const { return instrs_.at(static_cast<size_t>(x)).type; }

  int load(int buffer, ScalarType t, const Affine& access);
  int lit(ScalarType t, double v);  // integers: v must be integral and in range
  int lit_int(ScalarType t, int64_t v);
  int reduced(int reduction, ScalarType t);
  int index(const Affine& a);  // i64
  int convert(int x, ScalarType to);  // as tessera::convert_element
  int cast(int x, ScalarType to);     // plain C cast
  int unary(Op op, int x);            // Neg, Not, IsNan, IsInf
  int binary(Op op, int a, int b);    // arithmetic keeps a's type; comparisons give bool
  int select(int c, int a, int b);
  int call(MathFn fn, int x, int y = -1);

  // Integer arithmetic that wraps like tessera/ops/wrapping.h; plain for floats and bool.
  int wrapping(Op op, int a, int b);
  int wrapping_neg(int x);

 private:
  int add(Instr in);
  std::vector<Instr>& instrs_;
  std::map<std::string, int> numbering_;
};

// The scalar value of `node` (single output, elementwise) given its inputs' values, in the node's
// output type. Throws tessera::Error for ops the loop IR cannot express.
int lower_elementwise(const ir::Node& node, const std::vector<int>& args, ScalarCode& code);

// The value of a numel-1 constant or a `full` node, as a literal; -1 if `node` is neither.
int literal_of(const ir::Node& node, ScalarCode& code);

// Whether `node` is a constant that literal_of turns into a literal: generated code that reads it holds
// its value, so that code serves another graph only where this constant's value is the same (a `full`
// node's value is an attribute, part of any structural key already).
bool is_literal_constant(const ir::Node& node);

}  // namespace tessera::lower
