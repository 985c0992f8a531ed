// Elementwise unary ops. Each is declared once with register_unary: a name, which dtypes it accepts,
// a factory that turns the node's attributes into a scalar function, and a gradient rule written with
// ops:: (so gradients are ordinary, differentiable graphs).
#include "tessera/ops/unary.h"

#include <cmath>
#include <numbers>

#include "tessera/ir/op_def.h"
#include "tessera/ops/kernel_util.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"
#include "tessera/ops/wrapping.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

enum class Accepts { Floating, Numeric, Any };
enum class Result { SameAsInput, Bool };

bool accepts(Accepts a, DType dt) {
  switch (a) {
    case Accepts::Floating: return is_floating(dt);
    case Accepts::Numeric: return dt != DType::boolean;
    case Accepts::Any: return true;
  }
  return false;
}

const char* accepts_str(Accepts a) {
  switch (a) {
    case Accepts::Floating: return "a floating dtype (f32, f64, f16, bf16); cast integers first";
    case Accepts::Numeric: return "a numeric dtype (not bool)";
    case Accepts::Any: return "any dtype";
  }
  return "";
}

// `make` receives the attributes and returns a generic scalar function of the compute type.
// Dispatches over the element types `acc` admits, so that a floating-only function is never
// instantiated for integers.
template <Accepts acc, class F>
Array dispatch_accepted(DType dt, F&& f) {
  if constexpr (acc == Accepts::Floating) {
    return dispatch_floating(dt, "unary op", f);
  } else {
    return dispatch_dtype(dt, [&](auto tag) -> Array {
      if constexpr (acc == Accepts::Numeric && std::is_same_v<decltype(tag), bool>) {
        fail("unary op: bool input reached a numeric kernel");
      } else {
        return f(tag);
      }
    });
  }
}

template <Accepts acc, class Make>
void register_unary(ir::OpRegistry& r, const std::string& name, Result res,
                    std::vector<ir::AttrSpec> attrs, Make make, ir::VjpFn vjp) {
  uint32_t traits = ir::kElementwise | ir::kFusable | (res == Result::SameAsInput ? ir::kInPlace : 0u);
  r.add(ir::OpDef{
      .name = name,
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = std::move(attrs),
      .traits = traits,
      .infer = [name, res](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> {
        if (!accepts(acc, in[0].dtype)) ir::op_fail(name, in, "expected {}", accepts_str(acc));
        return {{res == Result::Bool ? DType::boolean : in[0].dtype, in[0].shape}};
      },
      .reference = [make, res](const std::vector<Array>& in, const Attrs& a,
                               const std::vector<TensorType>&) -> std::vector<Array> {
        auto f = make(a);
        return {dispatch_accepted<acc>(in[0].dtype(), [&](auto tag) -> Array {
          using T = decltype(tag);
          using C = compute_t<T>;
          if (res == Result::Bool) {
            return map_array<T, bool>(in[0], [&](T x) { return static_cast<bool>(f(static_cast<C>(x))); });
          } else {
            return map_array<T, T>(in[0], [&](T x) { return f(static_cast<C>(x)); });
          }
        })};
      },
      .vjp = std::move(vjp),
  });
}

// Shorthand: a unary op without attributes whose scalar function is `f`.
template <class F>
auto plain(F f) {
  return [f](const Attrs&) { return f; };
}

template <class C>
C gelu_exact(C x) {
  return static_cast<C>(0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)));
}
template <class C>
C gelu_tanh(C x) {
  const double c = std::sqrt(2.0 / std::numbers::pi);
  return static_cast<C>(0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x))));
}
}  // namespace

Tensor neg(const Tensor& x) { return ir::make_node1("neg", {x}); }
Tensor abs(const Tensor& x) { return ir::make_node1("abs", {x}); }
Tensor sign(const Tensor& x) { return ir::make_node1("sign", {x}); }
Tensor exp(const Tensor& x) { return ir::make_node1("exp", {x}); }
Tensor expm1(const Tensor& x) { return ir::make_node1("expm1", {x}); }
Tensor log(const Tensor& x) { return ir::make_node1("log", {x}); }
Tensor log1p(const Tensor& x) { return ir::make_node1("log1p", {x}); }
Tensor sqrt(const Tensor& x) { return ir::make_node1("sqrt", {x}); }
Tensor rsqrt(const Tensor& x) { return ir::make_node1("rsqrt", {x}); }
Tensor square(const Tensor& x) { return ir::make_node1("square", {x}); }
Tensor reciprocal(const Tensor& x) { return ir::make_node1("reciprocal", {x}); }
Tensor sin(const Tensor& x) { return ir::make_node1("sin", {x}); }
Tensor cos(const Tensor& x) { return ir::make_node1("cos", {x}); }
Tensor tanh(const Tensor& x) { return ir::make_node1("tanh", {x}); }
Tensor erf(const Tensor& x) { return ir::make_node1("erf", {x}); }
Tensor sigmoid(const Tensor& x) { return ir::make_node1("sigmoid", {x}); }
Tensor relu(const Tensor& x) { return ir::make_node1("relu", {x}); }
Tensor leaky_relu(const Tensor& x, double slope) {
  return ir::make_node1("leaky_relu", {x}, Attrs{{"negative_slope", slope}});
}
Tensor elu(const Tensor& x, double alpha) { return ir::make_node1("elu", {x}, Attrs{{"alpha", alpha}}); }
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  return ir::make_node1("gelu", {x}, Attrs{{"approximate", tanh_approximation}});
}
Tensor silu(const Tensor& x) { return ir::make_node1("silu", {x}); }
Tensor softplus(const Tensor& x, double beta, double threshold) {
  TESSERA_CHECK(beta > 0, "softplus: beta must be positive, got {}", beta);
  return ir::make_node1("softplus", {x}, Attrs{{"beta", beta}, {"threshold", threshold}});
}
Tensor floor(const Tensor& x) { return ir::make_node1("floor", {x}); }
Tensor ceil(const Tensor& x) { return ir::make_node1("ceil", {x}); }
Tensor round(const Tensor& x) { return ir::make_node1("round", {x}); }
Tensor logical_not(const Tensor& x) { return ir::make_node1("logical_not", {x}); }
Tensor isnan(const Tensor& x) { return ir::make_node1("isnan", {x}); }
Tensor isinf(const Tensor& x) { return ir::make_node1("isinf", {x}); }
Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return ir::make_node1("cast", {x}, Attrs{{"dtype", dtype}});
}
Tensor stop_gradient(const Tensor& x) { return ir::make_node1("stop_gradient", {x}); }

void register_unary_ops(ir::OpRegistry& r) {
  const auto Same = Result::SameAsInput;
  auto g = [](const VjpContext& c) { return Tensor(c.cotangent()); };
  auto x = [](const VjpContext& c) { return Tensor(c.input(0)); };
  auto y = [](const VjpContext& c) { return Tensor(c.output()); };

  register_unary<Accepts::Numeric>(r, "neg", Same, {}, plain([](auto v) { return wrapping_neg(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {neg(g(c))}; });
  register_unary<Accepts::Numeric>(r, "abs", Same, {}, plain([](auto v) {
                   if constexpr (std::is_unsigned_v<decltype(v)>) {
                     return v;
                   } else if constexpr (std::is_floating_point_v<decltype(v)>) {
                     return std::fabs(v);  // abs(-0.0) is +0.0
                   } else {
                     return v < 0 ? wrapping_neg(v) : v;  // abs(INT_MIN) wraps, as in NumPy
                   }
                 }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * sign(x(c))}; });
  register_unary<Accepts::Numeric>(r, "sign", Same, {}, plain([](auto v) {
                   if constexpr (std::is_unsigned_v<decltype(v)>) {
                     return decltype(v)(v > 0);
                   } else if constexpr (std::is_floating_point_v<decltype(v)>) {
                     return std::isnan(v) ? v : decltype(v)((v > 0) - (v < 0));
                   } else {
                     return decltype(v)((v > 0) - (v < 0));
                   }
                 }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {zeros_like(x(c))}; });
  register_unary<Accepts::Floating>(r, "exp", Same, {}, plain([](auto v) { return std::exp(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * y(c)}; });
  register_unary<Accepts::Floating>(r, "expm1", Same, {}, plain([](auto v) { return std::expm1(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * (y(c) + 1.0)}; });
  register_unary<Accepts::Floating>(r, "log", Same, {}, plain([](auto v) { return std::log(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) / x(c)}; });
  register_unary<Accepts::Floating>(r, "log1p", Same, {}, plain([](auto v) { return std::log1p(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) / (x(c) + 1.0)}; });
  register_unary<Accepts::Floating>(r, "sqrt", Same, {}, plain([](auto v) { return std::sqrt(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) / (y(c) * 2.0)}; });
  register_unary<Accepts::Floating>(r, "rsqrt", Same, {}, plain([](auto v) { return decltype(v)(1) / std::sqrt(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * y(c) / x(c) * -0.5}; });
  register_unary<Accepts::Numeric>(r, "square", Same, {}, plain([](auto v) { return wrapping_mul(v, v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * x(c) * 2.0}; });
  register_unary<Accepts::Floating>(r, "reciprocal", Same, {}, plain([](auto v) { return decltype(v)(1) / v; }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {neg(g(c) * square(y(c)))}; });
  register_unary<Accepts::Floating>(r, "sin", Same, {}, plain([](auto v) { return std::sin(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * cos(x(c))}; });
  register_unary<Accepts::Floating>(r, "cos", Same, {}, plain([](auto v) { return std::cos(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {neg(g(c) * sin(x(c)))}; });
  register_unary<Accepts::Floating>(r, "tanh", Same, {}, plain([](auto v) { return std::tanh(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * (1.0 - square(y(c)))}; });
  register_unary<Accepts::Floating>(r, "erf", Same, {}, plain([](auto v) { return std::erf(v); }),
                 [=](const VjpContext& c) -> std::vector<Value> {
                   return {g(c) * exp(neg(square(x(c)))) * (2.0 / std::sqrt(std::numbers::pi))};
                 });
  register_unary<Accepts::Floating>(r, "sigmoid", Same, {},
                 plain([](auto v) {
                   // Written to avoid overflow of exp for large |v|.
                   using C = decltype(v);
                   if (v >= 0) return C(1) / (C(1) + std::exp(-v));
                   const C e = std::exp(v);
                   return e / (C(1) + e);
                 }),
                 [=](const VjpContext& c) -> std::vector<Value> { return {g(c) * y(c) * (1.0 - y(c))}; });
  register_unary<Accepts::Numeric>(r, "relu", Same, {}, plain([](auto v) { return v < 0 ? decltype(v)(0) : v; }),  // NaN passes through
                 // relu(x) > 0 exactly where x > 0 (NaN and -0 included). Reading the output leaves the
                 // input with a single use, so backends can fuse relu into the op that produced it.
                 [=](const VjpContext& c) -> std::vector<Value> {
                   return {where(gt(y(c), scalar_like(y(c), 0.0)), g(c), zeros_like(g(c)))};
                 });
  register_unary<Accepts::Floating>(r, "leaky_relu", Same, {{"negative_slope", ir::AttrKind::Float}},
      [](const Attrs& a) {
        const double s = a.get_float("negative_slope");
        return [s](auto v) { return v > 0 ? v : static_cast<decltype(v)>(v * s); };
      },
      [=](const VjpContext& c) -> std::vector<Value> {
        const double s = c.attrs().get_float("negative_slope");
        return {where(gt(x(c), scalar_like(x(c), 0.0)), g(c), g(c) * s)};
      });
  register_unary<Accepts::Floating>(r, "elu", Same, {{"alpha", ir::AttrKind::Float}},
      [](const Attrs& a) {
        const double alpha = a.get_float("alpha");
        return [alpha](auto v) { return v > 0 ? v : static_cast<decltype(v)>(alpha * std::expm1(v)); };
      },
      [=](const VjpContext& c) -> std::vector<Value> {
        const double alpha = c.attrs().get_float("alpha");
        return {where(gt(x(c), scalar_like(x(c), 0.0)), g(c), g(c) * (y(c) + alpha))};
      });
  register_unary<Accepts::Floating>(r, "gelu", Same, {{"approximate", ir::AttrKind::Bool}},
      [](const Attrs& a) {
        const bool approx = a.get_bool("approximate");
        return [approx](auto v) { return approx ? gelu_tanh(v) : gelu_exact(v); };
      },
      [=](const VjpContext& c) -> std::vector<Value> {
        const Tensor xv = x(c);
        if (c.attrs().get_bool("approximate")) {
          const double k = std::sqrt(2.0 / std::numbers::pi);
          const Tensor t = tanh((xv + xv * xv * xv * 0.044715) * k);
          const Tensor du = (1.0 + square(xv) * (3.0 * 0.044715)) * k;
          return {g(c) * (0.5 * (1.0 + t) + 0.5 * xv * (1.0 - square(t)) * du)};
        }
        const Tensor cdf = 0.5 * (1.0 + erf(xv * (1.0 / std::numbers::sqrt2)));
        const Tensor pdf = exp(square(xv) * -0.5) * (1.0 / std::sqrt(2.0 * std::numbers::pi));
        return {g(c) * (cdf + xv * pdf)};
      });
  register_unary<Accepts::Floating>(r, "silu", Same, {},
                 plain([](auto v) {
                   using C = decltype(v);
                   return v >= 0 ? v / (C(1) + std::exp(-v)) : v * std::exp(v) / (C(1) + std::exp(v));
                 }),
                 [=](const VjpContext& c) -> std::vector<Value> {
                   const Tensor s = sigmoid(x(c));
                   return {g(c) * s * (1.0 + x(c) * (1.0 - s))};
                 });
  register_unary<Accepts::Floating>(r, "softplus", Same, {{"beta", ir::AttrKind::Float}, {"threshold", ir::AttrKind::Float}},
      [](const Attrs& a) {
        const double beta = a.get_float("beta"), thr = a.get_float("threshold");
        return [beta, thr](auto v) {
          using C = decltype(v);
          const double bx = beta * static_cast<double>(v);
          if (bx > thr) return v;
          return static_cast<C>((std::max(bx, 0.0) + std::log1p(std::exp(-std::abs(bx)))) / beta);
        };
      },
      [=](const VjpContext& c) -> std::vector<Value> {
        const double beta = c.attrs().get_float("beta"), thr = c.attrs().get_float("threshold");
        const Tensor bx = x(c) * beta;
        return {g(c) * where(gt(bx, scalar_like(bx, thr)), ones_like(bx), sigmoid(bx))};
      });
  auto zero_grad = [=](const VjpContext& c) -> std::vector<Value> { return {zeros_like(x(c))}; };
  register_unary<Accepts::Floating>(r, "floor", Same, {}, plain([](auto v) { return std::floor(v); }), zero_grad);
  register_unary<Accepts::Floating>(r, "ceil", Same, {}, plain([](auto v) { return std::ceil(v); }), zero_grad);
  register_unary<Accepts::Floating>(r, "round", Same, {}, plain([](auto v) { return std::nearbyint(v); }), zero_grad);
  register_unary<Accepts::Any>(r, "logical_not", Result::Bool, {}, plain([](auto v) { return v == 0; }), nullptr);
  register_unary<Accepts::Any>(r, "isnan", Result::Bool, {},
                 plain([](auto v) {
                   if constexpr (std::is_floating_point_v<decltype(v)>) return std::isnan(v);
                   return false;
                 }),
                 nullptr);
  register_unary<Accepts::Any>(r, "isinf", Result::Bool, {},
                 plain([](auto v) {
                   if constexpr (std::is_floating_point_v<decltype(v)>) return std::isinf(v);
                   return false;
                 }),
                 nullptr);

  r.add(ir::OpDef{
      .name = "cast",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"dtype", ir::AttrKind::DType}},
      .traits = ir::kElementwise | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        return {{a.get_dtype("dtype"), in[0].shape}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> { return {in[0].astype(a.get_dtype("dtype"))}; },
      .vjp = [=](const VjpContext& c) -> std::vector<Value> {
        if (!is_floating(c.input(0).dtype())) return {Value()};
        return {cast(g(c), c.input(0).dtype())};
      },
  });
  r.add(ir::OpDef{
      .name = "stop_gradient",
      .min_inputs = 1,
      .max_inputs = 1,
      .traits = ir::kElementwise | ir::kView,
      .infer = [](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> { return {in[0]}; },
      .reference = [](const std::vector<Array>& in, const Attrs&,
                      const std::vector<TensorType>&) -> std::vector<Array> { return {in[0]}; },
      .vjp = [](const VjpContext&) -> std::vector<Value> { return {Value()}; },
  });
}

}  // namespace tessera::ops
