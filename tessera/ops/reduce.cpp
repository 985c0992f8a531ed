// Reductions. `sum` is the primitive that the gradients of broadcasting rely on; the other reductions
// follow the same pattern: reduce_type for the shape rule, reduce_array for the reference kernel.
#include "tessera/ops/reduce.h"

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/reduce_util.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

Attrs reduce_attrs(const Axes& axes, bool keepdims) { return Attrs{{"axes", axes}, {"keepdims", keepdims}}; }

const std::vector<ir::AttrSpec> kReduceAttrs = {{"axes", ir::AttrKind::Ints}, {"keepdims", ir::AttrKind::Bool}};

// Sum accumulates in double for floating types (f16/bf16/f32 inputs lose nothing) and in int64 for
// integers; bool sums count the true values as i64.
DType sum_dtype(DType dt) { return dt == DType::boolean ? DType::i64 : dt; }
}  // namespace

std::vector<int64_t> reduce_axes(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs) {
  try {
    return normalize_axes(attrs.get_ints("axes"), in[0].rank(), op.c_str());
  } catch (const Error& e) {
    ir::op_fail(op, in, "{}", e.what());
  }
}

Shape keepdims_shape(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape out = shape;
  for (int64_t a : axes) out[static_cast<size_t>(a)] = 1;
  return out;
}

TensorType reduce_type(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs, DType out_dtype) {
  const std::vector<int64_t> axes = reduce_axes(op, in, attrs);
  if (attrs.get_bool("keepdims")) return {out_dtype, keepdims_shape(in[0].shape, axes)};
  Shape out;
  for (int64_t d = 0; d < in[0].rank(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) out.push_back(in[0].shape[static_cast<size_t>(d)]);
  }
  return {out_dtype, out};
}

Tensor sum(const Tensor& x, const Axes& axes, bool keepdims) {
  return ir::make_node1("sum", {x}, reduce_attrs(axes, keepdims));
}

Tensor sum_to_shape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  TESSERA_CHECK(x.rank() >= static_cast<int64_t>(shape.size()), "sum_to_shape: cannot sum {} to higher rank {}",
                shape_str(x.shape()), shape_str(shape));
  const int64_t lead = x.rank() - static_cast<int64_t>(shape.size());
  Axes axes;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d < lead) {
      axes.push_back(d);
    } else if (shape[static_cast<size_t>(d - lead)] == 1 && x.shape()[static_cast<size_t>(d)] != 1) {
      axes.push_back(d);
    } else {
      TESSERA_CHECK(shape[static_cast<size_t>(d - lead)] == x.shape()[static_cast<size_t>(d)],
                    "sum_to_shape: {} is not a broadcast of {}", shape_str(x.shape()), shape_str(shape));
    }
  }
  Tensor s = axes.empty() ? x : sum(x, axes, true);
  return reshape(s, shape);
}

void register_reduce_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "sum",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = kReduceAttrs,
      .traits = ir::kReduction | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        return {reduce_type("sum", in, a, sum_dtype(in[0].dtype))};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const std::vector<int64_t> axes = normalize_axes(a.get_ints("axes"), in[0].rank(), "sum");
        return {dispatch_dtype(in[0].dtype(), [&](auto tag) -> Array {
          using E = decltype(tag);
          using Acc = std::conditional_t<std::is_floating_point_v<compute_t<E>>, double, int64_t>;
          using Out = std::conditional_t<std::is_same_v<E, bool>, int64_t, E>;
          return reduce_array<E, Acc, Out>(
              in[0], axes, out[0].shape, [] { return Acc(0); },
              [](Acc acc, E v, int64_t) { return acc + static_cast<Acc>(static_cast<compute_t<E>>(v)); },
              [](Acc acc, int64_t) { return acc; });
        })};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Shape& in_shape = c.input(0).shape();
        const std::vector<int64_t> axes = normalize_axes(c.attrs().get_ints("axes"), c.input(0).rank(), "sum");
        const Tensor g = reshape(Tensor(c.cotangent()), keepdims_shape(in_shape, axes));
        return {broadcast_to(g, in_shape)};
      },
  });
  // Further reductions (mean, max, min, prod, argmax, argmin, logsumexp, var, std, cumsum) are
  // registered by register_more_reductions in reduce_more.cpp.
  register_more_reductions(r);
}

}  // namespace tessera::ops
