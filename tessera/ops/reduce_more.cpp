// mean, max, min, prod and logsumexp as ops (reference kernels on reduce_array), var and std as
// composites. argmax, argmin and cumsum live in reduce_arg.cpp.
#include <cmath>
#include <limits>

#include "tessera/ir/op_def.h"
#include "tessera/ir/origin.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/reduce_util.h"

namespace tessera::ops {

void register_arg_reductions(ir::OpRegistry& r);  // reduce_arg.cpp

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

const std::vector<ir::AttrSpec> kReduceAttrs = {{"axes", ir::AttrKind::Ints}, {"keepdims", ir::AttrKind::Bool}};

Attrs reduce_attrs(const Axes& axes, bool keepdims) {
  return Attrs{{"axes", axes}, {"keepdims", keepdims}};
}

Tensor T(const Value& v) {
  return Tensor(v);
}

void require_floating(const std::string& op, const std::vector<TensorType>& in) {
  if (!is_floating(in[0].dtype)) {
    ir::op_fail(op, in, "expected a floating dtype (f32, f64, f16, bf16), got {}; cast the input first",
                dtype_name(in[0].dtype));
  }
}

// The number of elements each output element of a reduction combines.
int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& axes) {
  int64_t count = 1;
  for (int64_t a : axes) count *= shape[static_cast<size_t>(a)];
  return count;
}

// max/min/argmax have no value for an empty slice: refuse at shape inference, as NumPy does at run time.
void require_nonempty(const std::string& op, const std::vector<TensorType>& in, const std::vector<int64_t>& axes) {
  if (reduced_count(in[0].shape, axes) == 0) {
    ir::op_fail(
        op, in,
        "cannot reduce over zero elements: axes {} of shape {} include an empty axis, and {} has no identity value",
        shape_str(axes), shape_str(in[0].shape), op);
  }
}

// The node's cotangent (or output) reshaped to the input's rank, with size 1 on the reduced axes, so
// that it broadcasts against the input.
Tensor kept(const Value& v, const VjpContext& c) {
  const std::vector<int64_t> axes = normalize_axes(c.attrs().get_ints("axes"), c.input(0).rank(), "reduce");
  return reshape(T(v), keepdims_shape(c.input(0).shape(), axes));
}

// max (is_max) or min of one slice; a NaN anywhere makes the result NaN, as in NumPy and PyTorch.
template <class E>
Array extremum_array(const Array& x, const std::vector<int64_t>& axes, const Shape& out_shape, bool is_max) {
  using C = compute_t<E>;
  return reduce_array<E, C, E>(
      x, axes, out_shape, [] { return C{}; },
      [is_max](C acc, E e, int64_t i) {
        const C v = static_cast<C>(e);
        if (i == 0 || is_nan_value(v)) return v;
        if (is_nan_value(acc)) return acc;
        return (is_max ? v > acc : v < acc) ? v : acc;
      },
      [](C acc, int64_t) { return acc; });
}

void register_extremum(ir::OpRegistry& r, const std::string& name, bool is_max) {
  r.add(ir::OpDef{
      .name = name,
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = kReduceAttrs,
      .traits = ir::kReduction | ir::kFusable,
      .infer = [name](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        require_nonempty(name, in, reduce_axes(name, in, a));
        return {reduce_type(name, in, a, in[0].dtype)};
      },
      .reference = [name, is_max](const std::vector<Array>& in, const Attrs& a,
                                  const std::vector<TensorType>& out) -> std::vector<Array> {
        const std::vector<int64_t> axes = normalize_axes(a.get_ints("axes"), in[0].rank(), name.c_str());
        return {dispatch_dtype(in[0].dtype(), [&](auto tag) -> Array {
          return extremum_array<decltype(tag)>(in[0], axes, out[0].shape, is_max);
        })};
      },
      // The gradient goes to the elements equal to the result, split evenly between ties.
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Tensor x = T(c.input(0));
        const std::vector<int64_t> axes = normalize_axes(c.attrs().get_ints("axes"), x.rank(), "reduce");
        const Tensor hits = cast(eq(x, kept(c.output(), c)), x.dtype());
        return {hits * kept(c.cotangent(), c) / sum(hits, axes, true)};
      },
  });
}

// prod's gradient is the product of the other elements. With no zero in a slice that is prod / x; with
// exactly one zero only the zero's position gets a gradient (the product of the non-zeros); with more
// zeros every product of others is zero. Second derivatives are exact away from zeros.
Value prod_vjp(const VjpContext& c) {
  const Tensor x = T(c.input(0));
  const std::vector<int64_t> axes = normalize_axes(c.attrs().get_ints("axes"), x.rank(), "prod");
  const Tensor is_zero = eq(x, zeros_like(x));
  const Tensor nonzero = where(is_zero, ones_like(x), x);
  const Tensor zeros_in_slice = sum(cast(is_zero, x.dtype()), axes, true);
  const Tensor nonzero_product = prod(nonzero, axes, true);
  const Tensor no_zero = eq(zeros_in_slice, zeros_like(zeros_in_slice));
  const Tensor one_zero = eq(zeros_in_slice, ones_like(zeros_in_slice));
  const Tensor others =
      where(no_zero, nonzero_product / nonzero, where(logical_and(one_zero, is_zero), nonzero_product, zeros_like(x)));
  return others * kept(c.cotangent(), c);
}

// Stable log(sum(exp(x))) of one slice: the maximum is factored out so that exp never overflows.
double logsumexp_slice(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double e : v) {
    if (std::isnan(e)) return e;
    m = std::max(m, e);
  }
  if (!std::isfinite(m)) return m;  // all -inf (or empty) gives -inf; any +inf gives +inf
  double s = 0;
  for (double e : v) s += std::exp(e - m);
  return m + std::log(s);
}

}  // namespace

Tensor mean(const Tensor& x, const Axes& axes, bool keepdims) {
  return ir::make_node1("mean", {x}, reduce_attrs(axes, keepdims));
}
Tensor max(const Tensor& x, const Axes& axes, bool keepdims) {
  return ir::make_node1("max", {x}, reduce_attrs(axes, keepdims));
}
Tensor min(const Tensor& x, const Axes& axes, bool keepdims) {
  return ir::make_node1("min", {x}, reduce_attrs(axes, keepdims));
}
Tensor prod(const Tensor& x, const Axes& axes, bool keepdims) {
  return ir::make_node1("prod", {x}, reduce_attrs(axes, keepdims));
}
Tensor logsumexp(const Tensor& x, const Axes& axes, bool keepdims) {
  return ir::make_node1("logsumexp", {x}, reduce_attrs(axes, keepdims));
}

// Two passes (mean, then squared deviations) rather than E[x^2] - E[x]^2, which cancels badly. Half
// precision inputs compute in f32 so that the sum of squares cannot overflow.
Tensor var(const Tensor& x, const Axes& axes, int64_t correction, bool keepdims) {
  const ir::OriginScope origin("ops::var");
  const std::vector<TensorType> in = {x.type()};
  require_floating("var", in);
  if (correction < 0) ir::op_fail("var", in, "correction must be non-negative, got {}", correction);
  std::vector<int64_t> norm_axes;
  try {
    norm_axes = normalize_axes(axes, x.rank(), "var");
  } catch (const Error& e) {
    ir::op_fail("var", in, "{}", e.what());
  }
  const bool half = x.dtype() == DType::f16 || x.dtype() == DType::bf16;
  const Tensor xc = half ? cast(x, DType::f32) : x;
  const Tensor deviation = xc - mean(xc, norm_axes, true);
  // count - correction may be zero or negative: the result is then inf or nan, as in NumPy and PyTorch.
  const double dof = std::max<double>(static_cast<double>(reduced_count(x.shape(), norm_axes) - correction), 0.0);
  const Tensor v = sum(square(deviation), norm_axes, keepdims) / scalar_like(xc, dof);
  return half ? cast(v, x.dtype()) : v;
}

Tensor std(const Tensor& x, const Axes& axes, int64_t correction, bool keepdims) {
  if (!is_floating(x.dtype())) require_floating("std", {x.type()});
  return sqrt(var(x, axes, correction, keepdims));
}

void register_more_reductions(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "mean",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = kReduceAttrs,
      .traits = ir::kReduction | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        require_floating("mean", in);
        return {reduce_type("mean", in, a, in[0].dtype)};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const std::vector<int64_t> axes = normalize_axes(a.get_ints("axes"), in[0].rank(), "mean");
        return {dispatch_floating(in[0].dtype(), "mean", [&](auto tag) -> Array {
          using E = decltype(tag);
          // An empty slice gives 0/0 = nan, as NumPy does.
          return reduce_array<E, double, E>(
              in[0], axes, out[0].shape, [] { return 0.0; },
              [](double acc, E v, int64_t) { return acc + static_cast<double>(static_cast<compute_t<E>>(v)); },
              [](double acc, int64_t count) { return acc / static_cast<double>(count); });
        })};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Shape& shape = c.input(0).shape();
        const std::vector<int64_t> axes = normalize_axes(c.attrs().get_ints("axes"), c.input(0).rank(), "mean");
        const Tensor g = kept(c.cotangent(), c) / static_cast<double>(reduced_count(shape, axes));
        return {broadcast_to(g, shape)};
      },
  });

  register_extremum(r, "max", true);
  register_extremum(r, "min", false);

  r.add(ir::OpDef{
      .name = "prod",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = kReduceAttrs,
      .traits = ir::kReduction | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        // As sum: bool counts as integers (the product of booleans is their logical and, as i64).
        return {reduce_type("prod", in, a, in[0].dtype == DType::boolean ? DType::i64 : in[0].dtype)};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const std::vector<int64_t> axes = normalize_axes(a.get_ints("axes"), in[0].rank(), "prod");
        return {dispatch_dtype(in[0].dtype(), [&](auto tag) -> Array {
          using E = decltype(tag);
          using Out = std::conditional_t<std::is_same_v<E, bool>, int64_t, E>;
          if constexpr (std::is_floating_point_v<compute_t<E>>) {
            return reduce_array<E, double, Out>(
                in[0], axes, out[0].shape, [] { return 1.0; },
                [](double acc, E v, int64_t) { return acc * static_cast<double>(static_cast<compute_t<E>>(v)); },
                [](double acc, int64_t) { return acc; });
          } else {
            // Integer products wrap on overflow (unsigned arithmetic, no undefined behaviour).
            return reduce_array<E, uint64_t, Out>(
                in[0], axes, out[0].shape, [] { return uint64_t{1}; },
                [](uint64_t acc, E v, int64_t) { return acc * static_cast<uint64_t>(static_cast<int64_t>(v)); },
                [](uint64_t acc, int64_t) { return static_cast<int64_t>(acc); });
          }
        })};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> { return {prod_vjp(c)}; },
  });

  r.add(ir::OpDef{
      .name = "logsumexp",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = kReduceAttrs,
      .traits = ir::kReduction,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        require_floating("logsumexp", in);
        return {reduce_type("logsumexp", in, a, in[0].dtype)};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const std::vector<int64_t> axes = normalize_axes(a.get_ints("axes"), in[0].rank(), "logsumexp");
        return {dispatch_floating(in[0].dtype(), "logsumexp", [&](auto tag) -> Array {
          using E = decltype(tag);
          // Two passes over each slice need the slice at hand: gather it (as double), then reduce it.
          std::vector<double> slice;
          return reduce_array<E, std::vector<double>*, E>(
              in[0], axes, out[0].shape,
              [&slice] {
                slice.clear();
                return &slice;
              },
              [](std::vector<double>* acc, E v, int64_t) {
                acc->push_back(static_cast<double>(static_cast<compute_t<E>>(v)));
                return acc;
              },
              [](std::vector<double>* acc, int64_t) { return logsumexp_slice(*acc); });
        })};
      },
      // d/dx logsumexp(x) = softmax(x) = exp(x - logsumexp(x)).
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {exp(T(c.input(0)) - kept(c.output(), c)) * kept(c.cotangent(), c)};
      },
      // max, sub, exp, sum, log, add. An infinite maximum is replaced by 0 so that x - m stays defined
      // (all -inf slices then give log(0) = -inf, +inf slices give +inf).
      .decompose = [](const std::vector<Value>& in, const Attrs& a) -> std::vector<Value> {
        const Tensor x = T(in[0]);
        const Axes& axes = a.get_ints("axes");
        const bool keepdims = a.get_bool("keepdims");
        const Tensor m = stop_gradient(max(x, axes, true));
        const Tensor m_safe = where(isinf(m), zeros_like(m), m);
        const Tensor s = log(sum(exp(x - m_safe), axes, true)) + m_safe;
        const TensorType t = reduce_type("logsumexp", {x.type()}, a, x.dtype());
        return {keepdims ? s.value() : reshape(s, t.shape).value()};
      },
  });

  register_arg_reductions(r);
}

}  // namespace tessera::ops
