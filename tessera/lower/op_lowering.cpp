// Scalar semantics of every op the loop IR can express, written to match the reference kernels in
// tessera/ops (unary.cpp, binary.cpp, wrapping.h, reduce*.cpp) bit for bit where the math library
// allows: the same compute types, the same evaluation order of double-precision formulas, the same
// integer wrap-around and saturating casts. can_generate lists exactly the ops lowered here.
#include <cmath>
#include <numbers>
#include <set>
#include <string>

#include "tessera/core/convert.h"
#include "tessera/ir/op_def.h"
#include "tessera/lower/fusion.h"
#include "tessera/lower/scalar_code.h"

namespace tessera::lower {

namespace {

const std::set<std::string>& float_unary_ops() {
  static const std::set<std::string> ops = {"exp",  "expm1", "log",      "log1p", "sqrt",    "rsqrt",      "reciprocal",
                                            "sin",  "cos",   "tanh",     "erf",   "sigmoid", "leaky_relu", "elu",
                                            "gelu", "silu",  "softplus", "floor", "ceil",    "round"};
  return ops;
}
const std::set<std::string>& numeric_unary_ops() {
  static const std::set<std::string> ops = {"neg", "abs", "sign", "square", "relu"};
  return ops;
}
const std::set<std::string>& any_unary_ops() {
  static const std::set<std::string> ops = {"logical_not", "isnan", "isinf", "cast", "stop_gradient"};
  return ops;
}
const std::set<std::string>& binary_ops() {
  static const std::set<std::string> ops = {"add", "sub", "mul", "div", "pow", "maximum",     "minimum",   "eq",
                                            "ne",  "lt",  "le",  "gt",  "ge",  "logical_and", "logical_or"};
  return ops;
}
const std::set<std::string>& view_ops() {
  static const std::set<std::string> ops = {"reshape", "permute", "broadcast_to", "slice", "flip"};
  return ops;
}
const std::set<std::string>& reduce_ops() {
  static const std::set<std::string> ops = {"sum", "mean", "max", "min", "prod"};
  return ops;
}

ScalarType st(DType dt) {
  return scalar_type_of(dt);
}

// The dtype binary ops compute in, as binary.cpp's compute_dtype.
DType binary_compute_dtype(const std::string& op, DType a, DType b) {
  if (op == "logical_and" || op == "logical_or") return DType::boolean;
  DType dt = promote_types(a, b);
  if ((op == "div" || op == "pow") && !is_floating(dt)) dt = DType::f32;
  return dt;
}

// A double-precision formula's value cast to the float type t (the reference writes
// static_cast<C>(double expression) for these).
int to_f64(ScalarCode& c, int x) {
  return c.convert(x, ScalarType::f64);
}

int lower_unary(const std::string& op, const ir::Node& node, int x, ScalarCode& c) {
  const ScalarType t = c.type(x);
  const ScalarType out = st(node.output_types()[0].dtype);
  auto lit = [&](double v) { return c.lit(t, v); };
  auto d = [&](double v) { return c.lit(ScalarType::f64, v); };
  const auto& a = node.attrs();
  if (op == "cast") return c.convert(x, out);
  if (op == "stop_gradient") return x;
  if (op == "neg") return c.wrapping_neg(x);
  if (op == "abs") {
    if (is_float(t)) return c.call(MathFn::fabs, x);
    if (is_unsigned_int(t)) return x;
    return c.select(c.binary(Op::Lt, x, lit(0)), c.wrapping_neg(x), x);
  }
  if (op == "sign") {
    const int pos = c.binary(Op::Gt, x, lit(0)), negv = c.binary(Op::Lt, x, lit(0));
    if (is_unsigned_int(t)) return c.cast(pos, t);
    const int s = c.binary(Op::Sub, c.cast(pos, t), c.cast(negv, t));
    return is_float(t) ? c.select(c.unary(Op::IsNan, x), x, s) : s;
  }
  if (op == "square") return c.wrapping(Op::Mul, x, x);
  if (op == "relu") return c.select(c.binary(Op::Lt, x, lit(0)), lit(0), x);  // NaN passes through
  if (op == "logical_not") return c.binary(Op::Eq, x, lit(0));
  if (op == "isnan") return is_float(t) ? c.unary(Op::IsNan, x) : c.lit(ScalarType::boolean, 0);
  if (op == "isinf") return is_float(t) ? c.unary(Op::IsInf, x) : c.lit(ScalarType::boolean, 0);
  // Floating-only functions from here on.
  static const std::pair<const char*, MathFn> plain_calls[] = {
      {"exp", MathFn::exp},   {"expm1", MathFn::expm1}, {"log", MathFn::log},   {"log1p", MathFn::log1p},
      {"sqrt", MathFn::sqrt}, {"sin", MathFn::sin},     {"cos", MathFn::cos},   {"tanh", MathFn::tanh},
      {"erf", MathFn::erf},   {"floor", MathFn::floor}, {"ceil", MathFn::ceil}, {"round", MathFn::nearbyint}};
  for (const auto& [name, fn] : plain_calls) {
    if (op == name) return c.call(fn, x);
  }
  if (op == "rsqrt") {  // the call first, then the literal: a numbering that does not depend on the compiler
    const int root = c.call(MathFn::sqrt, x);
    return c.binary(Op::Div, lit(1), root);
  }
  if (op == "reciprocal") return c.binary(Op::Div, lit(1), x);
  const int nonneg = c.binary(Op::Ge, x, lit(0));
  if (op == "sigmoid" || op == "silu") {
    // exp(-|x|) is exp(-x) for x >= 0 and exp(x) below: one exp gives both branches of the
    // reference formula exactly.
    const int e = c.call(MathFn::exp, c.unary(Op::Neg, c.call(MathFn::fabs, x)));
    const int one_plus = c.binary(Op::Add, lit(1), e);
    if (op == "sigmoid") {
      return c.select(nonneg, c.binary(Op::Div, lit(1), one_plus), c.binary(Op::Div, e, one_plus));
    }
    return c.select(nonneg, c.binary(Op::Div, x, one_plus), c.binary(Op::Div, c.binary(Op::Mul, x, e), one_plus));
  }
  const int positive = c.binary(Op::Gt, x, lit(0));
  if (op == "leaky_relu") {
    const int scaled = c.binary(Op::Mul, to_f64(c, x), d(a.get_float("negative_slope")));
    return c.select(positive, x, c.convert(scaled, t));
  }
  if (op == "elu") {
    const int scaled = c.binary(Op::Mul, d(a.get_float("alpha")), to_f64(c, c.call(MathFn::expm1, x)));
    return c.select(positive, x, c.convert(scaled, t));
  }
  if (op == "gelu") {
    const int xd = to_f64(c, x);
    const int half_x = c.binary(Op::Mul, d(0.5), xd);
    int inner;
    if (a.get_bool("approximate")) {
      const int cube = c.binary(Op::Mul, c.binary(Op::Mul, c.binary(Op::Mul, d(0.044715), xd), xd), xd);
      const int arg = c.binary(Op::Mul, d(std::sqrt(2.0 / std::numbers::pi)), c.binary(Op::Add, xd, cube));
      inner = c.call(MathFn::tanh, arg);
    } else {
      inner = c.call(MathFn::erf, c.binary(Op::Div, xd, d(std::numbers::sqrt2)));
    }
    return c.convert(c.binary(Op::Mul, half_x, c.binary(Op::Add, d(1.0), inner)), t);
  }
  if (op == "softplus") {
    const double beta = a.get_float("beta"), thr = a.get_float("threshold");
    const int bx = c.binary(Op::Mul, d(beta), to_f64(c, x));
    // std::max(bx, 0.0) is (bx < 0 ? 0 : bx), which keeps a NaN.
    const int clipped = c.select(c.binary(Op::Lt, bx, d(0.0)), d(0.0), bx);
    const int tail = c.call(MathFn::log1p, c.call(MathFn::exp, c.unary(Op::Neg, c.call(MathFn::fabs, bx))));
    const int soft = c.convert(c.binary(Op::Div, c.binary(Op::Add, clipped, tail), d(beta)), t);
    return c.select(c.binary(Op::Gt, bx, d(thr)), x, soft);
  }
  fail("loop IR: no lowering for unary op '{}'", op);
}

int lower_binary(const std::string& op, const ir::Node& node, int a0, int b0, ScalarCode& c) {
  const ScalarType rounded = st(binary_compute_dtype(op, node.input(0).dtype(), node.input(1).dtype()));
  // Operands round to the compute dtype first (the reference's astype); f16/bf16 then compute in f32.
  const ScalarType t = is_half(rounded) ? ScalarType::f32 : rounded;
  const int a = c.convert(c.convert(a0, rounded), t), b = c.convert(c.convert(b0, rounded), t);
  if (op == "add") return c.wrapping(Op::Add, a, b);
  if (op == "sub") return c.wrapping(Op::Sub, a, b);
  if (op == "mul") return c.wrapping(Op::Mul, a, b);
  if (op == "div") return c.binary(Op::Div, a, b);
  if (op == "pow") return c.call(MathFn::pow, a, b);
  if (op == "maximum" || op == "minimum") {
    const int pick = c.select(c.binary(op == "maximum" ? Op::Gt : Op::Lt, a, b), a, b);
    if (!is_float(t)) return pick;
    const int any_nan = c.binary(Op::Or, c.unary(Op::IsNan, a), c.unary(Op::IsNan, b));
    return c.select(any_nan, c.binary(Op::Add, a, b), pick);  // NaN propagates as in the reference
  }
  static const std::pair<const char*, Op> compares[] = {{"eq", Op::Eq},           {"ne", Op::Ne},        {"lt", Op::Lt},
                                                        {"le", Op::Le},           {"gt", Op::Gt},        {"ge", Op::Ge},
                                                        {"logical_and", Op::And}, {"logical_or", Op::Or}};
  for (const auto& [name, o] : compares) {
    if (op == name) return c.binary(o, a, b);
  }
  fail("loop IR: no lowering for binary op '{}'", op);
}

int lower_clamp(const ir::Node& node, int x, ScalarCode& c) {
  const ScalarType t = c.type(x);
  const auto& a = node.attrs();
  // Integer tensors clamp to the integers inside [lo, hi], as binary.cpp does.
  const bool integral = !is_float(t);
  int v = x;
  if (a.has("min")) {
    const double lo = a.get_float("min");
    const int bound = c.lit(t, integral ? std::ceil(lo) : lo);
    v = c.select(c.binary(Op::Lt, v, bound), bound, v);
  }
  if (a.has("max")) {
    const double hi = a.get_float("max");
    const int bound = c.lit(t, integral ? std::floor(hi) : hi);
    v = c.select(c.binary(Op::Gt, v, bound), bound, v);
  }
  return v;
}

bool is_half_dtype(DType dt) {
  return dt == DType::f16 || dt == DType::bf16;
}

bool all_types_supported(const ir::Node& node, bool half_types) {
  if (half_types) return true;
  for (const ir::Value& v : node.inputs()) {
    if (is_half_dtype(v.dtype())) return false;
  }
  for (const ir::TensorType& t : node.output_types()) {
    if (is_half_dtype(t.dtype)) return false;
  }
  return true;
}

}  // namespace

int lower_elementwise(const ir::Node& node, const std::vector<int>& args, ScalarCode& code) {
  const std::string& op = node.op_name();
  const ScalarType out = st(node.output_types()[0].dtype);
  // f16/bf16 values compute in f32 like the reference's compute_t: widen the operand, round the result.
  auto widened = [&](int x) { return is_half(code.type(x)) ? code.convert(x, ScalarType::f32) : x; };
  int r;
  if (op == "stop_gradient" || (op == "cast" && code.type(args.at(0)) == out)) {
    r = args.at(0);
  } else if (float_unary_ops().count(op) || numeric_unary_ops().count(op) || any_unary_ops().count(op)) {
    r = lower_unary(op, node, widened(args.at(0)), code);
  } else if (binary_ops().count(op)) {
    r = lower_binary(op, node, args.at(0), args.at(1), code);
  } else if (op == "where") {
    r = code.select(args.at(0), code.convert(args.at(1), out), code.convert(args.at(2), out));
  } else if (op == "clamp") {
    r = lower_clamp(node, widened(args.at(0)), code);
  } else {
    fail("loop IR: no lowering for op '{}'", op);
  }
  if (is_half(out)) r = code.convert(r, out);
  TESSERA_CHECK(code.type(r) == out, "loop IR: op '{}' lowered to {} instead of {}", op, scalar_type_name(code.type(r)),
                scalar_type_name(out));
  return r;
}

int literal_of(const ir::Node& node, ScalarCode& code) {
  const std::string& op = node.op_name();
  if (node.num_outputs() != 1) return -1;
  const ScalarType t = st(node.output_types()[0].dtype);
  if (op == "full") return code.lit(t, node.attrs().get_float("value"));
  if (is_literal_constant(node)) {
    const Array& v = node.attrs().get_tensor("value");
    if (is_float(t) || is_half(t)) return code.lit(t, v.item());
    return code.lit_int(t, v.to_i64()[0]);
  }
  return -1;
}

bool is_literal_constant(const ir::Node& node) {
  return node.op_name() == "constant" && node.num_outputs() == 1 && node.output_types()[0].numel() == 1;
}

bool can_generate(const ir::Node& node, bool half_types) {
  const std::string& op = node.op_name();
  if (node.num_outputs() != 1 || !all_types_supported(node, half_types)) return false;
  const DType in0 = node.inputs().empty() ? DType::f32 : node.input(0).dtype();
  if (float_unary_ops().count(op)) return is_floating(in0);
  if (numeric_unary_ops().count(op)) return in0 != DType::boolean;
  if (any_unary_ops().count(op) || binary_ops().count(op) || view_ops().count(op)) return true;
  if (op == "where" || op == "clamp" || op == "full" || op == "arange") return true;
  if (reduce_ops().count(op)) return op != "mean" || is_floating(in0);
  return false;
}

}  // namespace tessera::lower
