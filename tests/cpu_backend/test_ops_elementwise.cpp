// Differential samples for elementwise ops: every unary and binary op over several shapes (rank 0,
// empty, broadcasting) and dtypes, casts, where/clamp, and fused chains for generated kernels.
#include <cmath>
#include <limits>

#include "op_samples.h"

namespace tessera::test {
namespace {

using UnaryFn = Tensor (*)(const Tensor&);
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

struct Domain {
  double lo, hi;
};

// Halves and small integers, so that rounding ties and equal operands occur.
Array ties(const ir::TensorType& t, uint64_t seed) {
  std::vector<double> v = sample_array({DType::i64, t.shape}, seed, 0, 0).to_f64();
  for (double& x : v) x *= 0.5;
  return Array::from_vector(v, t.shape).astype(t.dtype);
}

// Floats with nan and +-inf mixed in.
Array with_specials(const ir::TensorType& t, uint64_t seed) {
  std::vector<double> v = sample_array({DType::f64, t.shape}, seed, -2, 2).to_f64();
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  for (size_t i = 0; i < v.size(); i += 3) v[i] = specials[(i / 3) % 3];
  return Array::from_vector(v, t.shape).astype(t.dtype);
}

const std::vector<DType> kOptionalDtypes = {DType::f16, DType::bf16, DType::i32,    DType::i64,
                                            DType::i8,  DType::u8,   DType::boolean};

void add_unary(std::vector<Sample>& out, const std::string& name, std::function<Tensor(const Tensor&)> f,
               Domain d = {-2, 2}) {
  MultiFn fn = [f](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {f(a[0])}; };
  auto add = [&](DType dt, const Shape& shape, bool optional) {
    Sample s{name + " " + ir::type_str({dt, shape}), {{dt, shape}}, fn};
    s.lo = d.lo;
    s.hi = d.hi;
    s.optional = optional;
    out.push_back(std::move(s));
  };
  add(DType::f32, {3, 4}, false);
  add(DType::f32, {}, false);
  add(DType::f32, {0, 3}, false);
  add(DType::f64, {2, 3}, false);
  add(DType::f32, {70, 33}, false);  // big enough for vector loops and tails
  for (DType dt : kOptionalDtypes) add(dt, {5}, true);
}

void add_binary(std::vector<Sample>& out, const std::string& name, BinaryFn f,
                std::function<Array(size_t, const ir::TensorType&, uint64_t)> data = {}) {
  MultiFn fn = [f](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {f(a[0], a[1])}; };
  auto add = [&](DType a, const Shape& sa, DType b, const Shape& sb, bool optional) {
    Sample s{name + " " + ir::type_str({a, sa}) + " " + ir::type_str({b, sb}), {{a, sa}, {b, sb}}, fn, data};
    s.optional = optional;
    out.push_back(std::move(s));
  };
  add(DType::f32, {3, 4}, DType::f32, {3, 4}, false);
  add(DType::f32, {3, 4}, DType::f32, {4}, false);
  add(DType::f32, {2, 1, 4}, DType::f32, {3, 1}, false);
  add(DType::f32, {}, DType::f32, {3}, false);
  add(DType::f32, {}, DType::f32, {}, false);
  add(DType::f32, {0, 4}, DType::f32, {4}, false);
  add(DType::f64, {2, 3}, DType::f64, {2, 1}, false);
  add(DType::f32, {40, 65}, DType::f32, {40, 1}, false);
  add(DType::f32, {3, 4}, DType::i32, {4}, true);
  add(DType::i64, {2, 3}, DType::f64, {}, true);
  for (DType dt : kOptionalDtypes) add(dt, {2, 3}, dt, {3}, true);
  add(DType::u8, {4}, DType::i8, {4}, true);
}

// Divisors and exponents away from zero/overflow, in every dtype.
Array nonzero_operand(size_t i, const ir::TensorType& t, uint64_t seed) {
  if (i == 0) return sample_array(t, seed, -2, 2);
  Array a = sample_array(t, seed, 0.5, 2);
  if (t.dtype == DType::boolean) return Array::full(t.dtype, t.shape, 1);
  if (!is_floating(t.dtype)) return Array::full(DType::i64, t.shape, 2).astype(t.dtype);
  return a;
}

Array pow_operands(size_t i, const ir::TensorType& t, uint64_t seed) {
  if (!is_floating(t.dtype)) {
    std::vector<double> v = sample_array({DType::i64, t.shape}, seed, 0, 0).to_f64();
    for (double& x : v) x = std::fmod(std::abs(x), 4.0);
    return Array::from_vector(v, t.shape).astype(t.dtype);
  }
  return i == 0 ? sample_array(t, seed, 0.5, 2) : sample_array(t, seed, -2, 2);
}

}  // namespace

std::vector<Sample> elementwise_samples() {
  std::vector<Sample> s;
  add_unary(s, "abs", ops::abs);
  add_unary(s, "neg", ops::neg);
  add_unary(s, "sign", ops::sign);
  add_unary(s, "square", ops::square);
  add_unary(s, "relu", ops::relu);
  add_unary(s, "floor", ops::floor);
  add_unary(s, "ceil", ops::ceil);
  add_unary(s, "sin", ops::sin);
  add_unary(s, "cos", ops::cos);
  add_unary(s, "tanh", ops::tanh);
  add_unary(s, "erf", ops::erf);
  add_unary(s, "sigmoid", ops::sigmoid, {-12, 12});
  add_unary(s, "exp", ops::exp);
  add_unary(s, "expm1", ops::expm1);
  add_unary(s, "silu", ops::silu, {-12, 12});
  add_unary(s, "elu", [](const Tensor& x) { return ops::elu(x, 0.7); });
  add_unary(s, "leaky_relu", [](const Tensor& x) { return ops::leaky_relu(x, 0.2); });
  add_unary(s, "gelu", [](const Tensor& x) { return ops::gelu(x, false); });
  add_unary(s, "gelu_tanh", [](const Tensor& x) { return ops::gelu(x, true); });
  add_unary(s, "softplus", [](const Tensor& x) { return ops::softplus(x, 2.0, 1.5); });
  add_unary(s, "log", ops::log, {0.1, 3});
  add_unary(s, "sqrt", ops::sqrt, {0.1, 3});
  add_unary(s, "rsqrt", ops::rsqrt, {0.1, 3});
  add_unary(s, "reciprocal", ops::reciprocal, {0.1, 3});
  add_unary(s, "log1p", ops::log1p, {-0.5, 2});
  add_unary(s, "logical_not", ops::logical_not);
  add_unary(s, "stop_gradient", ops::stop_gradient);
  for (auto [name, f] :
       {std::pair<const char*, UnaryFn>{"round", ops::round}, {"isnan", ops::isnan}, {"isinf", ops::isinf}}) {
    for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
      Sample x{std::string(name) + " specials " + dtype_name(dt),
               {{dt, {4, 6}}},
               [f = f](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {f(a[0])}; }};
      x.data = std::string(name) == "round"
                   ? [](size_t, const ir::TensorType& t, uint64_t seed) { return ties(t, seed); }
                   : [](size_t, const ir::TensorType& t, uint64_t seed) { return with_specials(t, seed); };
      s.push_back(std::move(x));
    }
  }

  add_binary(s, "add", ops::add);
  add_binary(s, "sub", ops::sub);
  add_binary(s, "mul", ops::mul);
  add_binary(s, "div", ops::div, nonzero_operand);
  add_binary(
      s, "pow", [](const Tensor& a, const Tensor& b) { return ops::pow(a, b); }, pow_operands);
  add_binary(s, "maximum", ops::maximum);
  add_binary(s, "minimum", ops::minimum);
  auto tie_data = [](size_t, const ir::TensorType& t, uint64_t seed) {
    return is_floating(t.dtype) ? ties(t, seed) : sample_array(t, seed, 0, 0);
  };
  add_binary(s, "eq", ops::eq, tie_data);
  add_binary(s, "ne", ops::ne, tie_data);
  add_binary(s, "lt", ops::lt, tie_data);
  add_binary(s, "le", ops::le, tie_data);
  add_binary(s, "gt", ops::gt, tie_data);
  add_binary(s, "ge", ops::ge, tie_data);
  add_binary(s, "logical_and", ops::logical_and);
  add_binary(s, "logical_or", ops::logical_or);

  // where, with broadcasting condition and branches.
  for (DType dt : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    s.push_back({std::string("where ") + dtype_name(dt),
                 {{DType::boolean, {3, 4}}, {dt, {3, 4}}, {dt, {4}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::where(a[0], a[1], a[2])}; }});
    s.push_back({std::string("where scalar branch ") + dtype_name(dt),
                 {{DType::boolean, {2, 1, 3}}, {dt, {}}, {dt, {4, 1}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::where(a[0], a[1], a[2])}; }});
  }
  // clamp with both bounds, one bound, and on integers.
  for (DType dt : {DType::f32, DType::f64, DType::i32, DType::i64, DType::bf16}) {
    s.push_back({std::string("clamp ") + dtype_name(dt),
                 {{dt, {5, 3}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::clamp(a[0], -1.0, 1.5), ops::clamp(a[0], std::nullopt, 0.5),
                           ops::clamp(a[0], -0.25, std::nullopt)};
                 }});
  }
  // Casts between all kinds (saturating float -> int, float -> bool, narrowing floats).
  const std::vector<std::pair<DType, DType>> casts = {
      {DType::f32, DType::i32},  {DType::f32, DType::i64},     {DType::f32, DType::boolean}, {DType::f32, DType::f16},
      {DType::f32, DType::bf16}, {DType::f32, DType::f64},     {DType::f64, DType::f32},     {DType::i32, DType::f32},
      {DType::i64, DType::f64},  {DType::boolean, DType::f32}, {DType::f64, DType::u8},      {DType::f32, DType::i8},
      {DType::bf16, DType::f32}, {DType::f16, DType::f32},     {DType::i32, DType::i64},     {DType::u8, DType::i32}};
  for (auto [from, to] : casts) {
    Sample c{std::string("cast ") + dtype_name(from) + " -> " + dtype_name(to),
             {{from, {4, 5}}},
             [to = to](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::cast(a[0], to)}; }};
    c.lo = -300;
    c.hi = 300;
    s.push_back(std::move(c));
  }

  // Fused chains (one generated kernel each when the JIT is on).
  s.push_back({"chain relu(a*x+b)",
               {{DType::f32, {64, 33}}, {DType::f32, {}}, {DType::f32, {33}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::relu(a[0] * a[1] + a[2])}; }});
  s.push_back({"chain with two outputs and reuse",
               {{DType::f32, {17, 9}}, {DType::f32, {17, 1}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 const Tensor t = ops::tanh(a[0] - a[1]);
                 return {t * t, ops::exp(t) + a[1], ops::sum(t * a[0], {1})};
               }});
  s.push_back(
      {"chain into row reduction", {{DType::f32, {31, 47}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
         return {ops::sum(ops::square(a[0]) + 1.0, {1}), ops::max(ops::abs(a[0]), {1}, true)};
       }});
  s.push_back({"chain into column reduction",
               {{DType::f32, {64, 20}}, {DType::f32, {64, 20}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::sum(a[0] * a[1], {0}), ops::mean(ops::relu(a[0]), {0}, true)};
               }});
  s.push_back({"chain through views",
               {{DType::f32, {6, 4}}, {DType::f32, {4, 6}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 const Tensor t = ops::transpose(a[1], 0, 1) + ops::flip(a[0], {0});
                 return {ops::reshape(t * 2.0, {3, 8}), ops::slice(ops::sigmoid(t), 1, 3, 0, -1)};
               }});
  s.push_back(
      {"chain f64 softplus-log", {{DType::f64, {9, 8}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
         return {ops::log1p(ops::exp(a[0])) - ops::softplus(a[0]), ops::expm1(a[0]) * 0.5};
       }});
  s.push_back({"chain integer arithmetic",
               {{DType::i32, {5, 6}}, {DType::i32, {6}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::maximum(a[0] * a[1] - a[0], a[1]), ops::cast(ops::gt(a[0], a[1]), DType::i32)};
               }});
  return s;
}

}  // namespace tessera::test
