// Elementwise ops: unary functions, binary arithmetic with Tessera's promotion and NumPy
// broadcasting made explicit (convert + broadcast_in_dim), comparisons, logic, where, clamp, cast.
#include <cmath>
#include <numbers>

#include "tessera/io/stablehlo/lower.h"

namespace tessera::io::stablehlo {

namespace {

using UnaryFn = std::function<Val(Emitter& e, const Val& x, const ir::Attrs& a)>;

void add_unary(LoweringTable& t, const std::string& op, UnaryFn f) {
  t.add(op, [f](LowerContext& c) -> std::vector<Val> { return {f(c.e, c.in[0], c.attrs())}; });
}

// A unary op that is one StableHLO op.
void add_simple(LoweringTable& t, const std::string& op, const std::string& stablehlo_op) {
  add_unary(t, op, [stablehlo_op](Emitter& e, const Val& x, const ir::Attrs&) { return e.unary(stablehlo_op, x); });
}

Val scale(Emitter& e, const Val& x, double s) {
  return e.mul(x, e.splat_like(x, s));
}
Val plus(Emitter& e, const Val& x, double s) {
  return e.add(x, e.splat_like(x, s));
}
Val is_positive(Emitter& e, const Val& x) {
  return e.compare(Cmp::GT, x, e.splat_like(x, 0.0));
}

// The value converted to `elem` and broadcast to `shape`.
Val coerce(Emitter& e, const Val& v, const std::string& elem, const Shape& shape) {
  return e.broadcast_to(e.convert(v, elem), shape);
}

enum class Kind { Arithmetic, Compare, Logical };

void add_binary(LoweringTable& t, const std::string& op, Kind kind, const std::string& stablehlo_op) {
  t.add(op, [op, kind, stablehlo_op](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Shape& shape = c.out_shape();
    if (kind == Kind::Logical) {
      return {e.binary(stablehlo_op, coerce(e, c.in[0], "i1", shape), coerce(e, c.in[1], "i1", shape))};
    }
    // Comparisons compute in the promoted type; arithmetic in the result type (div and pow of
    // integers promote to f32, which is their result type).
    const std::string elem = kind == Kind::Compare
                                 ? element_type(promote_types(c.node.input(0).dtype(), c.node.input(1).dtype()))
                                 : c.out_elem();
    const Val a = coerce(e, c.in[0], elem, shape), b = coerce(e, c.in[1], elem, shape);
    if (kind == Kind::Compare) {
      static const std::map<std::string, Cmp> dirs = {{"eq", Cmp::EQ}, {"ne", Cmp::NE}, {"lt", Cmp::LT},
                                                      {"le", Cmp::LE}, {"gt", Cmp::GT}, {"ge", Cmp::GE}};
      return {e.compare(dirs.at(op), a, b)};
    }
    if (elem == "i1") {
      // Booleans: + is or, * and min are and, max is or, - is xor (Tessera computes in bool).
      if (op == "add" || op == "maximum") return {e.logical_or(a, b)};
      if (op == "mul" || op == "minimum") return {e.logical_and(a, b)};
      if (op == "sub") return {e.logical_xor(a, b)};
    }
    return {e.binary(stablehlo_op, a, b)};
  });
}

}  // namespace

void add_elementwise_lowerings(LoweringTable& t) {
  add_simple(t, "exp", "stablehlo.exponential");
  add_simple(t, "expm1", "stablehlo.exponential_minus_one");
  add_simple(t, "log", "stablehlo.log");
  add_simple(t, "log1p", "stablehlo.log_plus_one");
  add_simple(t, "sqrt", "stablehlo.sqrt");
  add_simple(t, "rsqrt", "stablehlo.rsqrt");
  add_simple(t, "sin", "stablehlo.sine");
  add_simple(t, "cos", "stablehlo.cosine");
  add_simple(t, "tanh", "stablehlo.tanh");
  add_simple(t, "sigmoid", "stablehlo.logistic");
  add_simple(t, "floor", "stablehlo.floor");
  add_simple(t, "ceil", "stablehlo.ceil");
  add_simple(t, "round", "stablehlo.round_nearest_even");
  add_unary(t, "erf", [](Emitter& e, const Val& x, const ir::Attrs&) { return e.erf(x); });
  add_unary(t, "neg", [](Emitter& e, const Val& x, const ir::Attrs&) {
    // Unsigned negation wraps: 0 - x.
    return is_unsigned_element(x.elem) ? e.sub(e.splat_like(x, 0.0), x) : e.unary("stablehlo.negate", x);
  });
  add_unary(t, "abs", [](Emitter& e, const Val& x, const ir::Attrs&) {
    return is_unsigned_element(x.elem) ? x : e.unary("stablehlo.abs", x);
  });
  add_unary(t, "sign", [](Emitter& e, const Val& x, const ir::Attrs&) {
    if (is_unsigned_element(x.elem)) return e.raw_convert(e.compare(Cmp::NE, x, e.splat_like(x, 0.0)), x.elem);
    return e.unary("stablehlo.sign", x);
  });
  add_unary(t, "square", [](Emitter& e, const Val& x, const ir::Attrs&) { return e.mul(x, x); });
  add_unary(t, "reciprocal", [](Emitter& e, const Val& x, const ir::Attrs&) { return e.div(e.splat_like(x, 1.0), x); });
  add_unary(t, "relu", [](Emitter& e, const Val& x, const ir::Attrs&) { return e.max(x, e.splat_like(x, 0.0)); });
  add_unary(t, "leaky_relu", [](Emitter& e, const Val& x, const ir::Attrs& a) {
    return e.select(is_positive(e, x), x, scale(e, x, a.get_float("negative_slope")));
  });
  add_unary(t, "elu", [](Emitter& e, const Val& x, const ir::Attrs& a) {
    return e.select(is_positive(e, x), x,
                    scale(e, e.unary("stablehlo.exponential_minus_one", x), a.get_float("alpha")));
  });
  add_unary(t, "gelu", [](Emitter& e, const Val& x, const ir::Attrs& a) {
    Val inner;
    if (a.get_bool("approximate")) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      const Val cube = e.mul(e.mul(x, x), x);
      inner =
          e.unary("stablehlo.tanh", scale(e, e.add(x, scale(e, cube, 0.044715)), std::sqrt(2.0 / std::numbers::pi)));
    } else {
      inner = e.erf(scale(e, x, 1.0 / std::numbers::sqrt2));  // 0.5 x (1 + erf(x / sqrt 2))
    }
    return e.mul(scale(e, x, 0.5), plus(e, inner, 1.0));
  });
  add_unary(t, "silu",
            [](Emitter& e, const Val& x, const ir::Attrs&) { return e.mul(x, e.unary("stablehlo.logistic", x)); });
  add_unary(t, "softplus", [](Emitter& e, const Val& x, const ir::Attrs& a) {
    // log(1 + exp(beta x)) / beta as max(bx, 0) + log1p(exp(-|bx|)), linear above the threshold.
    const double beta = a.get_float("beta");
    const Val bx = scale(e, x, beta);
    const Val soft =
        e.add(e.max(bx, e.splat_like(bx, 0.0)),
              e.unary("stablehlo.log_plus_one",
                      e.unary("stablehlo.exponential", e.unary("stablehlo.negate", e.unary("stablehlo.abs", bx)))));
    const Val linear = e.compare(Cmp::GT, bx, e.splat_like(bx, a.get_float("threshold")));
    return e.select(linear, x, scale(e, soft, 1.0 / beta));
  });
  add_unary(t, "logical_not", [](Emitter& e, const Val& x, const ir::Attrs&) {
    return x.elem == "i1" ? e.unary("stablehlo.not", x) : e.compare(Cmp::EQ, x, e.splat_like(x, 0.0));
  });
  add_unary(t, "isnan", [](Emitter& e, const Val& x, const ir::Attrs&) {
    return x.is_float() ? e.is_nan(x) : e.splat(0.0, "i1", x.shape);
  });
  add_unary(t, "isinf", [](Emitter& e, const Val& x, const ir::Attrs&) {
    if (!x.is_float()) return e.splat(0.0, "i1", x.shape);
    return e.compare(Cmp::EQ, e.unary("stablehlo.abs", x), e.splat_like(x, HUGE_VAL));
  });
  t.add("cast", [](LowerContext& c) -> std::vector<Val> { return {c.e.convert(c.in[0], c.out_elem())}; });
  t.add("stop_gradient", [](LowerContext& c) -> std::vector<Val> { return {c.in[0]}; });

  add_binary(t, "add", Kind::Arithmetic, "stablehlo.add");
  add_binary(t, "sub", Kind::Arithmetic, "stablehlo.subtract");
  add_binary(t, "mul", Kind::Arithmetic, "stablehlo.multiply");
  add_binary(t, "div", Kind::Arithmetic, "stablehlo.divide");
  add_binary(t, "pow", Kind::Arithmetic, "stablehlo.power");
  add_binary(t, "maximum", Kind::Arithmetic, "stablehlo.maximum");
  add_binary(t, "minimum", Kind::Arithmetic, "stablehlo.minimum");
  for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge"}) add_binary(t, op, Kind::Compare, "stablehlo.compare");
  add_binary(t, "logical_and", Kind::Logical, "stablehlo.and");
  add_binary(t, "logical_or", Kind::Logical, "stablehlo.or");

  t.add("where", [](LowerContext& c) -> std::vector<Val> {
    const Shape& shape = c.out_shape();
    const std::string elem = c.out_elem();
    return {c.e.select(c.e.broadcast_to(c.in[0], shape), coerce(c.e, c.in[1], elem, shape),
                       coerce(c.e, c.in[2], elem, shape))};
  });
  t.add("clamp", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    Val x = c.in[0];
    // Integer tensors clamp to the integers inside [min, max] (the bounds saturate to the type).
    const bool integral = !x.is_float();
    if (c.attrs().has("min")) {
      const double lo = c.attrs().get_float("min");
      x = e.max(x, e.splat_like(x, integral ? std::ceil(lo) : lo));
    }
    if (c.attrs().has("max")) {
      const double hi = c.attrs().get_float("max");
      x = e.min(x, e.splat_like(x, integral ? std::floor(hi) : hi));
    }
    return {x};
  });
}

}  // namespace tessera::io::stablehlo
