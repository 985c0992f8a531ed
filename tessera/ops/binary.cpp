// Elementwise binary ops with NumPy broadcasting, plus where and clamp. Operands promote to a common
// dtype (promote_types); arithmetic results keep it, div/pow results are floating, comparisons and
// logic give bool.
#include "tessera/ops/binary.h"

#include <cmath>

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

enum class Kind { Arithmetic, FloatResult, Compare, Logical };

DType compute_dtype(Kind kind, DType a, DType b) {
  DType dt = promote_types(a, b);
  if (kind == Kind::FloatResult && !is_floating(dt)) dt = DType::f32;
  if (kind == Kind::Logical) dt = DType::boolean;
  return dt;
}

Array as_dtype(const Array& a, DType dt) { return a.dtype() == dt ? a : a.astype(dt); }

Tensor T(const Value& v) { return Tensor(v); }

// The gradient flowing to one operand: summed over its broadcast axes and cast back to its dtype.
Value operand_grad(const Tensor& g, const Value& input) {
  if (!is_floating(input.dtype())) return Value();
  return cast(sum_to_shape(g, input.shape()), input.dtype());
}

template <class Make>
void register_binary(ir::OpRegistry& r, const std::string& name, Kind kind, Make make, ir::VjpFn vjp) {
  uint32_t traits = ir::kElementwise | ir::kFusable | (kind == Kind::Arithmetic ? ir::kInPlace : 0u);
  r.add(ir::OpDef{
      .name = name,
      .min_inputs = 2,
      .max_inputs = 2,
      .traits = traits,
      .infer = [name, kind](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> {
        Shape shape;
        try {
          shape = broadcast_shapes(in[0].shape, in[1].shape, name.c_str());
        } catch (const Error&) {
          ir::op_fail(name, in, "shapes {} and {} do not broadcast", shape_str(in[0].shape), shape_str(in[1].shape));
        }
        const DType ct = compute_dtype(kind, in[0].dtype, in[1].dtype);
        return {{kind == Kind::Compare || kind == Kind::Logical ? DType::boolean : ct, shape}};
      },
      .reference = [make, kind](const std::vector<Array>& in, const Attrs&,
                                const std::vector<TensorType>& out) -> std::vector<Array> {
        const DType ct = compute_dtype(kind, in[0].dtype(), in[1].dtype());
        const Array a = as_dtype(in[0], ct), b = as_dtype(in[1], ct);
        return {dispatch_dtype(ct, [&](auto tag) -> Array {
          using T = decltype(tag);
          using C = compute_t<T>;
          auto f = make();
          if (kind == Kind::Compare || kind == Kind::Logical) {
            return map_array2<T, bool>(a, b, out[0].shape,
                                       [&](T x, T y) { return static_cast<bool>(f(static_cast<C>(x), static_cast<C>(y))); });
          }
          return map_array2<T, T>(a, b, out[0].shape, [&](T x, T y) { return f(static_cast<C>(x), static_cast<C>(y)); });
        })};
      },
      .vjp = std::move(vjp),
  });
}

template <class F>
auto fn(F f) {
  return [f]() { return f; };
}

// Integer division and modulo-free pow for the reference: integers compute in f32 (FloatResult),
// so these only see floating types or bool/integers through compute_t.
template <class C>
C safe_pow(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::pow(a, b);
  } else {
    return static_cast<C>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return ir::make_node1("add", {a, b}); }
Tensor sub(const Tensor& a, const Tensor& b) { return ir::make_node1("sub", {a, b}); }
Tensor mul(const Tensor& a, const Tensor& b) { return ir::make_node1("mul", {a, b}); }
Tensor div(const Tensor& a, const Tensor& b) { return ir::make_node1("div", {a, b}); }
Tensor pow(const Tensor& a, const Tensor& b) { return ir::make_node1("pow", {a, b}); }
Tensor pow(const Tensor& a, double exponent) { return pow(a, scalar_like(a, exponent)); }
Tensor maximum(const Tensor& a, const Tensor& b) { return ir::make_node1("maximum", {a, b}); }
Tensor minimum(const Tensor& a, const Tensor& b) { return ir::make_node1("minimum", {a, b}); }
Tensor eq(const Tensor& a, const Tensor& b) { return ir::make_node1("eq", {a, b}); }
Tensor ne(const Tensor& a, const Tensor& b) { return ir::make_node1("ne", {a, b}); }
Tensor lt(const Tensor& a, const Tensor& b) { return ir::make_node1("lt", {a, b}); }
Tensor le(const Tensor& a, const Tensor& b) { return ir::make_node1("le", {a, b}); }
Tensor gt(const Tensor& a, const Tensor& b) { return ir::make_node1("gt", {a, b}); }
Tensor ge(const Tensor& a, const Tensor& b) { return ir::make_node1("ge", {a, b}); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return ir::make_node1("logical_and", {a, b}); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return ir::make_node1("logical_or", {a, b}); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return ir::make_node1("where", {cond, a, b});
}

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  Attrs attrs;
  if (lo) attrs.set("min", *lo);
  if (hi) attrs.set("max", *hi);
  return ir::make_node1("clamp", {x}, std::move(attrs));
}

void register_binary_ops(ir::OpRegistry& r) {
  auto g = [](const VjpContext& c) { return T(c.cotangent()); };
  auto lhs = [](const VjpContext& c) { return T(c.input(0)); };
  auto rhs = [](const VjpContext& c) { return T(c.input(1)); };

  register_binary(r, "add", Kind::Arithmetic, fn([](auto x, auto y) { return wrapping_add(x, y); }),
                  [=](const VjpContext& c) -> std::vector<Value> {
                    return {operand_grad(g(c), c.input(0)), operand_grad(g(c), c.input(1))};
                  });
  register_binary(r, "sub", Kind::Arithmetic, fn([](auto x, auto y) { return wrapping_sub(x, y); }),
                  [=](const VjpContext& c) -> std::vector<Value> {
                    return {operand_grad(g(c), c.input(0)), operand_grad(neg(g(c)), c.input(1))};
                  });
  register_binary(r, "mul", Kind::Arithmetic, fn([](auto x, auto y) { return wrapping_mul(x, y); }),
                  [=](const VjpContext& c) -> std::vector<Value> {
                    return {operand_grad(g(c) * rhs(c), c.input(0)), operand_grad(g(c) * lhs(c), c.input(1))};
                  });
  register_binary(r, "div", Kind::FloatResult, fn([](auto x, auto y) { return x / y; }),
                  [=](const VjpContext& c) -> std::vector<Value> {
                    return {operand_grad(g(c) / rhs(c), c.input(0)),
                            operand_grad(neg(g(c) * T(c.output()) / rhs(c)), c.input(1))};
                  });
  register_binary(r, "pow", Kind::FloatResult, fn([](auto x, auto y) { return safe_pow(x, y); }),
                  [=](const VjpContext& c) -> std::vector<Value> {
                    const Tensor out = T(c.output());
                    const Tensor ga = g(c) * rhs(c) * pow(lhs(c), rhs(c) - 1.0);
                    // d/db a^b = a^b log a, taken as 0 where a <= 0 (as PyTorch does at a = 0).
                    const Tensor positive = gt(lhs(c), scalar_like(lhs(c), 0.0));
                    const Tensor safe_a = where(positive, lhs(c), ones_like(lhs(c)));
                    const Tensor gb = where(positive, g(c) * out * log(safe_a), zeros_like(out));
                    return {operand_grad(ga, c.input(0)), operand_grad(gb, c.input(1))};
                  });
  // Ties split the gradient evenly between the operands.
  auto minmax_vjp = [=](bool is_max) {
    return [=](const VjpContext& c) -> std::vector<Value> {
      const Tensor wins_a = cast(is_max ? gt(lhs(c), rhs(c)) : lt(lhs(c), rhs(c)), c.output().dtype());
      const Tensor ties = cast(eq(lhs(c), rhs(c)), c.output().dtype());
      const Tensor share_a = wins_a + ties * 0.5;
      return {operand_grad(g(c) * share_a, c.input(0)), operand_grad(g(c) * (1.0 - share_a), c.input(1))};
    };
  };
  register_binary(r, "maximum", Kind::Arithmetic, fn([](auto x, auto y) {
                    if constexpr (std::is_floating_point_v<decltype(x)>) {
                      if (std::isnan(x) || std::isnan(y)) return x + y;  // NaN propagates
                    }
                    return x > y ? x : y;
                  }),
                  minmax_vjp(true));
  register_binary(r, "minimum", Kind::Arithmetic, fn([](auto x, auto y) {
                    if constexpr (std::is_floating_point_v<decltype(x)>) {
                      if (std::isnan(x) || std::isnan(y)) return x + y;
                    }
                    return x < y ? x : y;
                  }),
                  minmax_vjp(false));
  register_binary(r, "eq", Kind::Compare, fn([](auto x, auto y) { return x == y; }), nullptr);
  register_binary(r, "ne", Kind::Compare, fn([](auto x, auto y) { return x != y; }), nullptr);
  register_binary(r, "lt", Kind::Compare, fn([](auto x, auto y) { return x < y; }), nullptr);
  register_binary(r, "le", Kind::Compare, fn([](auto x, auto y) { return x <= y; }), nullptr);
  register_binary(r, "gt", Kind::Compare, fn([](auto x, auto y) { return x > y; }), nullptr);
  register_binary(r, "ge", Kind::Compare, fn([](auto x, auto y) { return x >= y; }), nullptr);
  register_binary(r, "logical_and", Kind::Logical, fn([](auto x, auto y) { return x && y; }), nullptr);
  register_binary(r, "logical_or", Kind::Logical, fn([](auto x, auto y) { return x || y; }), nullptr);

  r.add(ir::OpDef{
      .name = "where",
      .min_inputs = 3,
      .max_inputs = 3,
      .traits = ir::kElementwise | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> {
        if (in[0].dtype != DType::boolean) ir::op_fail("where", in, "the condition must be bool");
        try {
          Shape s = broadcast_shapes(in[0].shape, broadcast_shapes(in[1].shape, in[2].shape, "where"), "where");
          return {{promote_types(in[1].dtype, in[2].dtype), s}};
        } catch (const Error&) {
          ir::op_fail("where", in, "shapes {}, {} and {} do not broadcast", shape_str(in[0].shape),
                      shape_str(in[1].shape), shape_str(in[2].shape));
        }
      },
      .reference = [](const std::vector<Array>& in, const Attrs&,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Shape& shape = out[0].shape;
        const Array cond = in[0].broadcast_to(shape);
        const Array av = as_dtype(in[1], out[0].dtype).broadcast_to(shape);
        const Array bv = as_dtype(in[2], out[0].dtype).broadcast_to(shape);
        Array o = Array::empty(out[0].dtype, shape);
        const Strides os = contiguous_strides(shape);
        dispatch_dtype(out[0].dtype, [&](auto tag) {
          using E = decltype(tag);
          const bool* pc = cond.data<const bool>();
          const E* pa = av.data<const E>();
          const E* pb = bv.data<const E>();
          E* po = o.data<E>();
          for_each_offset<4>(shape, {&cond.strides(), &av.strides(), &bv.strides(), &os}, {0, 0, 0, 0},
                             [&](const std::array<int64_t, 4>& off) { po[off[3]] = pc[off[0]] ? pa[off[1]] : pb[off[2]]; });
        });
        return {o};
      },
      .vjp = [=](const VjpContext& c) -> std::vector<Value> {
        const Tensor cond = T(c.input(0));
        const Tensor zero = zeros_like(g(c));
        return {Value(), operand_grad(where(cond, g(c), zero), c.input(1)),
                operand_grad(where(cond, zero, g(c)), c.input(2))};
      },
  });

  r.add(ir::OpDef{
      .name = "clamp",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"min", ir::AttrKind::Float, false}, {"max", ir::AttrKind::Float, false}},
      .traits = ir::kElementwise | ir::kFusable | ir::kInPlace,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        if (in[0].dtype == DType::boolean) ir::op_fail("clamp", in, "expected a numeric dtype, got bool");
        if (a.has("min") && a.has("max") && a.get_float("min") > a.get_float("max")) {
          ir::op_fail("clamp", in, "min {} is greater than max {}", a.get_float("min"), a.get_float("max"));
        }
        return {in[0]};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        const bool has_lo = a.has("min"), has_hi = a.has("max");
        const double lo = a.get_float_or("min", 0), hi = a.get_float_or("max", 0);
        return {dispatch_dtype(in[0].dtype(), [&](auto tag) -> Array {
          using E = decltype(tag);
          using C = compute_t<E>;
          // Integer tensors clamp to the integers inside [lo, hi]: ceil the lower bound, floor the upper.
          const bool integral = !std::is_floating_point_v<C>;
          const C clo = convert_element<C>(integral ? std::ceil(lo) : lo);
          const C chi = convert_element<C>(integral ? std::floor(hi) : hi);
          return map_array<E, E>(in[0], [&](E v) {
            C x = static_cast<C>(v);
            if (has_lo && x < clo) x = clo;
            if (has_hi && x > chi) x = chi;
            return x;
          });
        })};
      },
      .vjp = [=](const VjpContext& c) -> std::vector<Value> {
        const Tensor x = lhs(c);
        Tensor inside = ones_like(x);
        if (c.attrs().has("min")) inside = inside * cast(ge(x, scalar_like(x, c.attrs().get_float("min"))), x.dtype());
        if (c.attrs().has("max")) inside = inside * cast(le(x, scalar_like(x, c.attrs().get_float("max"))), x.dtype());
        return {g(c) * inside};
      },
  });
}

}  // namespace tessera::ops
