// Elementwise maths: unary functions, the arithmetic operators with NumPy broadcasting, and the
// variadic Max / Min / Sum / Mean. Version 1 of the older ops carried `consumed_inputs` and
// versions before 7 of the binary ops an explicit `broadcast` flag, so those are refused.
#include "tessera/io/onnx/onnx_dtype.h"
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

using UnaryFn = Tensor (*)(const Tensor&);

void add_unary(TranslationTable& t, const char* op, std::vector<int64_t> versions, int64_t oldest, UnaryFn fn,
               bool needs_float) {
  t.add(op, std::move(versions), oldest, [fn, needs_float](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    if (needs_float) require_floating(c, x);
    return {fn(x)};
  });
}

Tensor tan_of(const Tensor& x) { return ops::sin(x) / ops::cos(x); }
Tensor sinh_of(const Tensor& x) { return (ops::exp(x) - ops::exp(-x)) * 0.5; }
Tensor cosh_of(const Tensor& x) { return (ops::exp(x) + ops::exp(-x)) * 0.5; }
Tensor asinh_of(const Tensor& x) { return ops::log(x + ops::sqrt(x * x + 1.0)); }
Tensor acosh_of(const Tensor& x) { return ops::log(x + ops::sqrt(x * x - 1.0)); }
Tensor atanh_of(const Tensor& x) { return ops::log((1.0 + x) / (1.0 - x)) * 0.5; }
Tensor identity_of(const Tensor& x) { return x; }

// Integer division truncates toward zero (as C and ONNX's reference); computed in f64, which holds
// every i32 exactly.
Tensor divide(const Tensor& a, const Tensor& b) {
  if (is_floating(a.dtype())) return ops::div(a, b);
  return ops::cast(ops::div(ops::cast(a, DType::f64), ops::cast(b, DType::f64)), a.dtype());
}

// ONNX Pow keeps the base's type whatever the exponent's.
Tensor power(const Tensor& base, const Tensor& exponent) {
  if (is_floating(base.dtype())) return ops::pow(base, ops::cast(exponent, base.dtype()));
  return ops::cast(ops::pow(ops::cast(base, DType::f64), ops::cast(exponent, DType::f64)), base.dtype());
}

// fmod = 0: the remainder takes the divisor's sign (Python's %); fmod = 1: the dividend's (C fmod).
Tensor modulo(const NodeContext& c, const Tensor& a, const Tensor& b) {
  const int64_t fmod = c.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) c.fail("fmod is {}, expected 0 or 1", fmod);
  if (fmod == 0 && is_floating(a.dtype())) c.fail("fmod must be 1 for floating inputs");
  const Tensor x = ops::cast(a, DType::f64), y = ops::cast(b, DType::f64);
  const Tensor q = x / y;
  const Tensor whole = fmod == 1 ? ops::sign(q) * ops::floor(ops::abs(q)) : ops::floor(q);
  return ops::cast(x - whole * y, a.dtype());
}

// BitShift is defined for unsigned types; of those Tessera has uint8. Shifts are computed in f64,
// where every product of a uint8 and a power of two up to 2^7 is exact, and left shifts wrap mod 256.
Tensor bit_shift(const NodeContext& c, const Tensor& x, const Tensor& amount) {
  const std::string direction = c.attr_string("direction", "");
  if (x.dtype() != DType::u8) c.fail("input is {}, expected an unsigned integer type (of which Tessera has uint8)",
                                     dtype_name(x.dtype()));
  const Tensor v = ops::cast(x, DType::f64);
  const Tensor factor = ops::pow(scalar_as(v, 2.0), ops::cast(ops::minimum(amount, scalar_as(amount, 8.0)), DType::f64));
  if (direction == "LEFT") {
    const Tensor shifted = v * factor;
    return ops::cast(shifted - ops::floor(shifted / 256.0) * 256.0, DType::u8);
  }
  if (direction == "RIGHT") return ops::cast(ops::floor(v / factor), DType::u8);
  c.fail("direction is {}, expected LEFT or RIGHT", direction.empty() ? std::string("missing") : direction);
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

// Versions 1 and 6 of the arithmetic ops: shapes must be equal unless `broadcast` = 1, which matches
// B's shape against a run of A's dimensions starting at `axis` (default: A's trailing dimensions).
// consumed_inputs (version 1) was an optimisation hint without effect on the result.
std::pair<Tensor, Tensor> legacy_broadcast(const NodeContext& c, const Tensor& a, const Tensor& b) {
  c.ignore_attr("consumed_inputs");
  const bool broadcast = c.attr_int("broadcast", 0) != 0;
  if (!broadcast) {
    if (a.shape() != b.shape()) c.fail("shapes differ and broadcast = 0");
    return {a, b};
  }
  const int64_t axis = c.attr_int("axis", a.rank() - b.rank());
  if (axis < 0 || axis + b.rank() > a.rank()) c.fail("B of rank {} does not fit A of rank {} at axis {}", b.rank(), a.rank(), axis);
  Shape shape(static_cast<size_t>(a.rank()), 1);
  for (int64_t i = 0; i < b.rank(); ++i) shape[static_cast<size_t>(axis + i)] = b.shape()[static_cast<size_t>(i)];
  return {a, ops::reshape(b, shape)};
}

void add_binary(TranslationTable& t, const char* op, std::vector<int64_t> versions, int64_t oldest, BinaryFn fn) {
  t.add(op, std::move(versions), oldest, [fn](NodeContext& c) -> std::vector<Tensor> {
    if (c.version() < 7) {
      const auto [a, b] = legacy_broadcast(c, c.input(0), c.input(1));
      return {fn(a, b)};
    }
    return {fn(c.input(0), c.input(1))};
  });
}

Tensor add_of(const Tensor& a, const Tensor& b) { return ops::add(a, b); }
Tensor sub_of(const Tensor& a, const Tensor& b) { return ops::sub(a, b); }
Tensor mul_of(const Tensor& a, const Tensor& b) { return ops::mul(a, b); }

// Max / Min / Sum / Mean over one or more inputs, broadcasting (versions 8 on; 6 had equal shapes only,
// which broadcasting covers).
void add_variadic(TranslationTable& t, const char* op, std::vector<int64_t> versions, BinaryFn combine, bool mean) {
  t.add(op, std::move(versions), 6, [combine, mean](NodeContext& c) -> std::vector<Tensor> {
    const std::vector<Tensor> xs = c.inputs();
    if (xs.empty()) c.fail("needs at least one input");
    Tensor acc = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) acc = combine(acc, xs[i]);
    if (mean) acc = divide(acc, scalar_as(acc, static_cast<double>(xs.size())));
    return {acc};
  });
}

}  // namespace

void add_elementwise_translations(TranslationTable& t) {
  add_unary(t, "Abs", {1, 6, 13}, 6, ops::abs, false);
  add_unary(t, "Neg", {1, 6, 13}, 6, ops::neg, false);
  add_unary(t, "Sign", {9, 13}, 9, ops::sign, false);
  add_unary(t, "Exp", {1, 6, 13}, 6, ops::exp, true);
  add_unary(t, "Log", {1, 6, 13}, 6, ops::log, true);
  add_unary(t, "Sqrt", {1, 6, 13}, 6, ops::sqrt, true);
  add_unary(t, "Reciprocal", {1, 6, 13}, 6, ops::reciprocal, true);
  add_unary(t, "Floor", {1, 6, 13}, 6, ops::floor, true);
  add_unary(t, "Ceil", {1, 6, 13}, 6, ops::ceil, true);
  add_unary(t, "Round", {11}, 11, ops::round, true);
  add_unary(t, "Erf", {9, 13}, 9, ops::erf, true);
  add_unary(t, "Sin", {7}, 7, ops::sin, true);
  add_unary(t, "Cos", {7}, 7, ops::cos, true);
  add_unary(t, "Tan", {7}, 7, tan_of, true);
  add_unary(t, "Sinh", {9}, 9, sinh_of, true);
  add_unary(t, "Cosh", {9}, 9, cosh_of, true);
  add_unary(t, "Asinh", {9}, 9, asinh_of, true);
  add_unary(t, "Acosh", {9}, 9, acosh_of, true);
  add_unary(t, "Atanh", {9}, 9, atanh_of, true);
  add_unary(t, "Identity", {1, 13, 14, 16}, 1, identity_of, false);
  add_unary(t, "IsNaN", {9, 13}, 9, ops::isnan, true);
  t.add("IsInf", {10}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    require_floating(c, x);
    const bool negative = c.attr_int("detect_negative", 1) != 0, positive = c.attr_int("detect_positive", 1) != 0;
    const Tensor inf = ops::isinf(x);
    if (negative && positive) return {inf};
    const Tensor zero = scalar_as(x, 0.0);
    if (positive) return {ops::logical_and(inf, ops::gt(x, zero))};
    if (negative) return {ops::logical_and(inf, ops::lt(x, zero))};
    return {ops::logical_and(inf, ops::ne(x, x))};  // neither sign: all false
  });

  // Cast: float -> int truncates toward zero and saturates (ONNX leaves out-of-range results undefined).
  t.add("Cast", {1, 6, 9, 13}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    return {ops::cast(c.input(0), require_dtype(c.required_int("to"), c.where() + ": attribute 'to'"))};
  });
  t.add("CastLike", {15}, [](NodeContext& c) -> std::vector<Tensor> {
    return {ops::cast(c.input(0), c.input(1).dtype())};
  });

  add_binary(t, "Add", {1, 6, 7, 13, 14}, 1, add_of);
  add_binary(t, "Sub", {1, 6, 7, 13, 14}, 1, sub_of);
  add_binary(t, "Mul", {1, 6, 7, 13, 14}, 1, mul_of);
  add_binary(t, "Div", {1, 6, 7, 13, 14}, 1, divide);
  add_binary(t, "Pow", {1, 7, 12, 13, 15}, 1, power);
  t.add("BitShift", {11}, [](NodeContext& c) -> std::vector<Tensor> { return {bit_shift(c, c.input(0), c.input(1))}; });
  t.add("Mod", {10, 13}, [](NodeContext& c) -> std::vector<Tensor> { return {modulo(c, c.input(0), c.input(1))}; });
  add_variadic(t, "Max", {1, 6, 8, 12, 13}, ops::maximum, false);
  add_variadic(t, "Min", {1, 6, 8, 12, 13}, ops::minimum, false);
  add_variadic(t, "Sum", {1, 6, 8, 13}, add_of, false);
  add_variadic(t, "Mean", {1, 6, 8, 13}, add_of, true);
}

}  // namespace tessera::io::onnx
