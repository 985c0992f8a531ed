// Reductions along one axis: argmax and argmin (index of the first extremum, i64, no gradient) and
// cumsum (inclusive running sum; `reverse` sums from the end, which is also cumsum's gradient).
#include <cmath>

#include "tessera/core/strided.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/reduce_util.h"

namespace tessera::ops {

void register_arg_reductions(ir::OpRegistry& r);

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

int64_t node_axis(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs) {
  try {
    return normalize_axis(attrs.get_int("axis"), in[0].rank(), op.c_str());
  } catch (const Error& e) {
    ir::op_fail(op, in, "{}", e.what());
  }
}

// Index of the first maximum (or minimum) along `axis`; the first NaN wins, as in NumPy.
template <class E>
Array arg_extremum_array(const Array& x, int64_t axis, const Shape& out_shape, bool is_max) {
  using C = compute_t<E>;
  struct Best {
    C value;
    int64_t index;
  };
  return reduce_array<E, Best, int64_t>(
      x, {axis}, out_shape,
      [] {
        return Best{C{}, -1};
      },
      [is_max](Best best, E e, int64_t i) {
        const C v = static_cast<C>(e);
        if (best.index < 0) return Best{v, i};
        if (is_nan_value(best.value)) return best;
        if (is_nan_value(v) || (is_max ? v > best.value : v < best.value)) return Best{v, i};
        return best;
      },
      [](Best best, int64_t) { return best.index; });
}

void register_arg_extremum(ir::OpRegistry& r, const std::string& name, bool is_max) {
  r.add(ir::OpDef{
      .name = name,
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axis", ir::AttrKind::Int}, {"keepdims", ir::AttrKind::Bool}},
      .traits = ir::kReduction,
      .infer = [name, is_max](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t axis = node_axis(name, in, a);
        Shape shape = in[0].shape;
        if (shape[static_cast<size_t>(axis)] == 0) {
          ir::op_fail(name, in, "axis {} has size 0: there is no {} of zero elements", a.get_int("axis"),
                      is_max ? "maximum" : "minimum");
        }
        if (a.get_bool("keepdims")) {
          shape[static_cast<size_t>(axis)] = 1;
        } else {
          shape.erase(shape.begin() + axis);
        }
        return {{DType::i64, shape}};
      },
      .reference = [name, is_max](const std::vector<Array>& in, const Attrs& a,
                                  const std::vector<TensorType>& out) -> std::vector<Array> {
        const int64_t axis = normalize_axis(a.get_int("axis"), in[0].rank(), name.c_str());
        return {dispatch_dtype(in[0].dtype(), [&](auto tag) -> Array {
          return arg_extremum_array<decltype(tag)>(in[0], axis, out[0].shape, is_max);
        })};
      },
      // Integer output: no gradient flows through it (autodiff stops at non-floating values).
  });
}

// Inclusive running sum along `axis`; floating values accumulate in double, integers in wrapping 64 bits.
template <class E, class Out>
Array cumsum_array(const Array& x, int64_t axis, bool reverse) {
  using Acc = std::conditional_t<std::is_floating_point_v<compute_t<E>>, double, uint64_t>;
  const Shape& shape = x.shape();
  Array out = Array::empty(dtype_of<Out>(), shape);
  const Strides out_strides = contiguous_strides(shape);
  const size_t ax = static_cast<size_t>(axis);
  const int64_t len = shape[ax], in_step = x.strides()[ax], out_step = out_strides[ax];
  Shape outer = shape;
  outer[ax] = 1;  // walk every line along `axis` once
  const E* src = x.data<const E>();
  Out* dst = out.data<Out>();
  for_each_offset<2>(outer, {&x.strides(), &out_strides}, {0, 0}, [&](const std::array<int64_t, 2>& base) {
    Acc acc = 0;
    for (int64_t n = 0; n < len; ++n) {
      const int64_t i = reverse ? len - 1 - n : n;
      if constexpr (std::is_floating_point_v<Acc>) {
        acc += static_cast<double>(static_cast<compute_t<E>>(src[base[0] + i * in_step]));
      } else {
        acc += static_cast<uint64_t>(static_cast<int64_t>(src[base[0] + i * in_step]));
      }
      dst[base[1] + i * out_step] =
          convert_element<Out>(static_cast<std::conditional_t<std::is_floating_point_v<Acc>, double, int64_t>>(acc));
    }
  });
  return out;
}

}  // namespace

Tensor argmax(const Tensor& x, int64_t axis, bool keepdims) {
  return ir::make_node1("argmax", {x}, Attrs{{"axis", axis}, {"keepdims", keepdims}});
}
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims) {
  return ir::make_node1("argmin", {x}, Attrs{{"axis", axis}, {"keepdims", keepdims}});
}
Tensor cumsum(const Tensor& x, int64_t axis) {
  return cumsum(x, axis, false);
}
Tensor cumsum(const Tensor& x, int64_t axis, bool reverse) {
  return ir::make_node1("cumsum", {x}, Attrs{{"axis", axis}, {"reverse", reverse}});
}

void register_arg_reductions(ir::OpRegistry& r) {
  register_arg_extremum(r, "argmax", true);
  register_arg_extremum(r, "argmin", false);

  r.add(ir::OpDef{
      .name = "cumsum",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axis", ir::AttrKind::Int}, {"reverse", ir::AttrKind::Bool, false}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        node_axis("cumsum", in, a);
        // As sum: running counts of booleans are i64.
        return {{in[0].dtype == DType::boolean ? DType::i64 : in[0].dtype, in[0].shape}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        const int64_t axis = normalize_axis(a.get_int("axis"), in[0].rank(), "cumsum");
        const bool reverse = a.get_bool_or("reverse", false);
        return {dispatch_dtype(in[0].dtype(), [&](auto tag) -> Array {
          using E = decltype(tag);
          return cumsum_array<E, std::conditional_t<std::is_same_v<E, bool>, int64_t, E>>(in[0], axis, reverse);
        })};
      },
      // Each input element feeds every output at or after it, so its gradient sums the cotangent from
      // its position to the end: the cumsum of the cotangent in the opposite direction.
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {cumsum(Tensor(c.cotangent()), c.attrs().get_int("axis"), !c.attrs().get_bool_or("reverse", false))};
      },
  });
}

}  // namespace tessera::ops
