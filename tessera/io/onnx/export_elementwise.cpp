// Elementwise ops: unary functions (composed where opset 17 has no single op: gelu, silu, softplus,
// expm1, log1p), binary arithmetic with Tessera's promotion made explicit by casts (ONNX broadcasts
// like NumPy), comparisons, logic, where, clamp and cast.
#include <cmath>
#include <numbers>

#include "tessera/io/onnx/export_lower.h"

namespace tessera::io::onnx {

namespace {

using UnaryFn = std::function<OVal(LowerContext& c, const OVal& x)>;

void add_unary(LoweringTable& t, const std::string& op, UnaryFn f) {
  t.add(op, [f](LowerContext& c) -> std::vector<OVal> { return {f(c, c.in[0])}; });
}

// A unary op that is one ONNX op of the same type in and out.
void add_simple(LoweringTable& t, const std::string& op, const std::string& onnx_op) {
  add_unary(t, op, [onnx_op](LowerContext& c, const OVal& x) { return c.b.op(onnx_op, {x}, x.dtype, x.shape); });
}

OVal bin(GraphBuilder& b, const std::string& op, const OVal& x, const OVal& y) {
  return b.op(op, {x, y}, x.dtype, x.shape.size() >= y.shape.size() ? x.shape : y.shape);
}
OVal un(GraphBuilder& b, const std::string& op, const OVal& x) {
  return b.op(op, {x}, x.dtype, x.shape);
}
OVal scale(GraphBuilder& b, const OVal& x, double s) {
  return b.op("Mul", {x, b.scalar(s, x.dtype)}, x.dtype, x.shape);
}
OVal plus(GraphBuilder& b, const OVal& x, double s) {
  return b.op("Add", {x, b.scalar(s, x.dtype)}, x.dtype, x.shape);
}
OVal compare(GraphBuilder& b, const std::string& op, const OVal& x, const OVal& y, const Shape& shape) {
  return b.op(op, {x, y}, DType::boolean, shape);
}

enum class Kind { Arithmetic, Compare, Logical };

void add_binary(LoweringTable& t, const std::string& op, Kind kind, const std::string& onnx_op) {
  t.add(op, [op, kind, onnx_op](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const Shape& shape = c.out_shape();
    if (kind == Kind::Logical) {
      return {b.op(onnx_op, {b.cast(c.in[0], DType::boolean), b.cast(c.in[1], DType::boolean)}, DType::boolean, shape)};
    }
    // Comparisons compute in the promoted type; arithmetic in the result type (div and pow of integers
    // promote to f32, their result type).
    const DType dt = kind == Kind::Compare ? promote_types(c.in[0].dtype, c.in[1].dtype) : c.out_dtype();
    const OVal x = b.cast(c.in[0], dt), y = b.cast(c.in[1], dt);
    if (kind == Kind::Compare) {
      if (op == "ne") return {b.op("Not", {compare(b, "Equal", x, y, shape)}, DType::boolean, shape)};
      if (dt == DType::boolean && op != "eq") {
        // ONNX orders no booleans: compare them as 0/1 integers.
        return {compare(b, onnx_op, b.cast(x, DType::i32), b.cast(y, DType::i32), shape)};
      }
      return {compare(b, onnx_op, x, y, shape)};
    }
    if (dt == DType::boolean) {
      // Booleans: + and max are or, * and min are and, - is xor (Tessera computes in bool).
      if (op == "add" || op == "maximum") return {b.op("Or", {x, y}, dt, shape)};
      if (op == "mul" || op == "minimum") return {b.op("And", {x, y}, dt, shape)};
      if (op == "sub") return {b.op("Xor", {x, y}, dt, shape)};
      c.fail("boolean operands have no ONNX form for this op");
    }
    return {b.op(onnx_op, {x, y}, dt, shape)};
  });
}

}  // namespace

void add_elementwise_exports(LoweringTable& t) {
  add_simple(t, "exp", "Exp");
  add_simple(t, "log", "Log");
  add_simple(t, "sqrt", "Sqrt");
  add_simple(t, "sin", "Sin");
  add_simple(t, "cos", "Cos");
  add_simple(t, "tanh", "Tanh");
  add_simple(t, "sigmoid", "Sigmoid");
  add_simple(t, "floor", "Floor");
  add_simple(t, "ceil", "Ceil");
  add_simple(t, "round", "Round");  // half to even, as Tessera
  add_simple(t, "erf", "Erf");
  add_simple(t, "reciprocal", "Reciprocal");
  add_unary(t, "relu", [](LowerContext& c, const OVal& x) {
    // ONNX Runtime has Relu for floats and int8/int32 only: other integers take Max(x, 0).
    if (is_floating(x.dtype)) return un(c.b, "Relu", x);
    return bin(c.b, "Max", x, c.b.scalar(0, x.dtype));
  });
  add_unary(t, "rsqrt", [](LowerContext& c, const OVal& x) { return un(c.b, "Reciprocal", un(c.b, "Sqrt", x)); });
  add_unary(t, "expm1", [](LowerContext& c, const OVal& x) { return plus(c.b, un(c.b, "Exp", x), -1.0); });
  add_unary(t, "log1p", [](LowerContext& c, const OVal& x) { return un(c.b, "Log", plus(c.b, x, 1.0)); });
  add_unary(t, "neg", [](LowerContext& c, const OVal& x) {
    // ONNX's Neg takes signed types only; unsigned negation wraps: 0 - x.
    if (x.dtype == DType::u8) return bin(c.b, "Sub", c.b.scalar(0, x.dtype), x);
    return un(c.b, "Neg", x);
  });
  add_simple(t, "abs", "Abs");
  add_simple(t, "sign", "Sign");
  add_unary(t, "square", [](LowerContext& c, const OVal& x) { return bin(c.b, "Mul", x, x); });
  add_unary(t, "leaky_relu", [](LowerContext& c, const OVal& x) {
    const double slope = c.attrs().get_float("negative_slope");
    return c.b.op("LeakyRelu", {x}, x.dtype, x.shape, [slope](pb::NodeProto& n) { attr_float(n, "alpha", slope); });
  });
  add_unary(t, "elu", [](LowerContext& c, const OVal& x) {
    const double alpha = c.attrs().get_float("alpha");
    return c.b.op("Elu", {x}, x.dtype, x.shape, [alpha](pb::NodeProto& n) { attr_float(n, "alpha", alpha); });
  });
  add_unary(t, "gelu", [](LowerContext& c, const OVal& x) {
    GraphBuilder& b = c.b;
    OVal inner;
    if (c.attrs().get_bool("approximate")) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      const OVal cube = bin(b, "Mul", bin(b, "Mul", x, x), x);
      inner = un(b, "Tanh", scale(b, bin(b, "Add", x, scale(b, cube, 0.044715)), std::sqrt(2.0 / std::numbers::pi)));
    } else {
      inner = un(b, "Erf", scale(b, x, 1.0 / std::numbers::sqrt2));  // 0.5 x (1 + erf(x / sqrt 2))
    }
    return bin(b, "Mul", scale(b, x, 0.5), plus(b, inner, 1.0));
  });
  add_unary(t, "silu", [](LowerContext& c, const OVal& x) { return bin(c.b, "Mul", x, un(c.b, "Sigmoid", x)); });
  add_unary(t, "softplus", [](LowerContext& c, const OVal& x) {
    // log(1 + exp(beta x)) / beta as max(bx, 0) + log(1 + exp(-|bx|)), linear above the threshold.
    GraphBuilder& b = c.b;
    const double beta = c.attrs().get_float("beta");
    const OVal bx = scale(b, x, beta);
    const OVal soft = bin(b, "Add", bin(b, "Max", bx, b.scalar(0, x.dtype)),
                          un(b, "Log", plus(b, un(b, "Exp", un(b, "Neg", un(b, "Abs", bx))), 1.0)));
    const OVal linear = compare(b, "Greater", bx, b.scalar(c.attrs().get_float("threshold"), x.dtype), x.shape);
    return b.op("Where", {linear, x, scale(b, soft, 1.0 / beta)}, x.dtype, x.shape);
  });
  add_unary(t, "logical_not", [](LowerContext& c, const OVal& x) {
    if (x.dtype == DType::boolean) return un(c.b, "Not", x);
    return compare(c.b, "Equal", x, c.b.scalar(0, x.dtype), x.shape);
  });
  add_unary(t, "isnan", [](LowerContext& c, const OVal& x) {
    if (!is_floating(x.dtype)) return c.b.constant(Array::full(DType::boolean, x.shape, 0), "false");
    return c.b.op("IsNaN", {x}, DType::boolean, x.shape);
  });
  add_unary(t, "isinf", [](LowerContext& c, const OVal& x) {
    if (!is_floating(x.dtype)) return c.b.constant(Array::full(DType::boolean, x.shape, 0), "false");
    return c.b.op("IsInf", {x}, DType::boolean, x.shape);
  });
  // Tessera's float-to-integer cast saturates and maps NaN to 0; ONNX leaves out-of-range values to
  // the runtime, so only in-range values are guaranteed to agree.
  t.add("cast", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const OVal& x = c.in[0];
    const DType to = c.out_dtype();
    if (!is_floating(x.dtype) || !is_integral(to)) return {b.cast(x, to)};
    // Float to integer saturates and maps NaN to 0, as Tessera's cast: clip in f64 (which holds every
    // bound of i8..i32 exactly), and choose the bounds where x lies beyond them.
    const double lo = Array::full(to, {}, -HUGE_VAL).astype(DType::f64).item();
    const double hi = Array::full(to, {}, HUGE_VAL).astype(DType::f64).item();
    const OVal wide = b.cast(x, DType::f64);
    const OVal clipped = b.op("Clip", {wide, b.scalar(lo, DType::f64), b.scalar(hi, DType::f64)}, DType::f64, x.shape);
    const OVal nan = b.op("IsNaN", {wide}, DType::boolean, x.shape);
    const OVal zeroed = b.op("Where", {nan, b.scalar(0, DType::f64), clipped}, DType::f64, x.shape);
    return {b.cast(zeroed, to)};
  });
  t.add("stop_gradient", [](LowerContext& c) -> std::vector<OVal> { return {c.op("Identity", {c.in[0]})}; });

  add_binary(t, "add", Kind::Arithmetic, "Add");
  add_binary(t, "sub", Kind::Arithmetic, "Sub");
  add_binary(t, "mul", Kind::Arithmetic, "Mul");
  add_binary(t, "div", Kind::Arithmetic, "Div");
  add_binary(t, "pow", Kind::Arithmetic, "Pow");
  add_binary(t, "maximum", Kind::Arithmetic, "Max");
  add_binary(t, "minimum", Kind::Arithmetic, "Min");
  add_binary(t, "eq", Kind::Compare, "Equal");
  add_binary(t, "ne", Kind::Compare, "Equal");
  add_binary(t, "lt", Kind::Compare, "Less");
  add_binary(t, "le", Kind::Compare, "LessOrEqual");
  add_binary(t, "gt", Kind::Compare, "Greater");
  add_binary(t, "ge", Kind::Compare, "GreaterOrEqual");
  add_binary(t, "logical_and", Kind::Logical, "And");
  add_binary(t, "logical_or", Kind::Logical, "Or");

  t.add("where", [](LowerContext& c) -> std::vector<OVal> {
    const DType dt = c.out_dtype();
    return {c.op("Where", {c.b.cast(c.in[0], DType::boolean), c.b.cast(c.in[1], dt), c.b.cast(c.in[2], dt)})};
  });
  t.add("clamp", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    OVal x = c.in[0];
    // Integer tensors clamp to the integers inside [min, max].
    const bool integral = !is_floating(x.dtype);
    if (x.dtype == DType::boolean) c.fail("clamp of booleans has no ONNX form");
    if (c.attrs().has("min")) {
      const double lo = c.attrs().get_float("min");
      x = bin(b, "Max", x, b.scalar(integral ? std::ceil(lo) : lo, x.dtype));
    }
    if (c.attrs().has("max")) {
      const double hi = c.attrs().get_float("max");
      x = bin(b, "Min", x, b.scalar(integral ? std::floor(hi) : hi, x.dtype));
    }
    if (x.name == c.in[0].name) x = un(b, "Identity", x);
    return {x};
  });
}

}  // namespace tessera::io::onnx
