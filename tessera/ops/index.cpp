// Indexing by integer tensors: gather (take_along_axis), index_select, scatter_add, one_hot. Every
// kernel bounds-checks each index as it reads it and throws naming the op, the index, the axis and
// its size; nothing is read or written out of bounds.
#include "tessera/ops/index.h"

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"
#include "tessera/ops/shape_util.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

void check_index_dtype(const std::string& op, const std::vector<TensorType>& in, const TensorType& index) {
  if (index.dtype != DType::i32 && index.dtype != DType::i64) {
    ir::op_fail(op, in, "indices must be i32 or i64, got {}", dtype_name(index.dtype));
  }
}

// Calls f(p) with p a typed pointer to the index array's data (i32 or i64).
template <class F>
void with_indices(const Array& index, F&& f) {
  if (index.dtype() == DType::i32) {
    f(index.data<const int32_t>());
  } else {
    f(index.data<const int64_t>());
  }
}

// Returns index i as int64 after checking it lies in 0..size-1.
int64_t checked_index(const std::string& op, const std::vector<Array>& in, int64_t i, int64_t axis, int64_t size) {
  if (i < 0 || i >= size) {
    ir::op_fail(op, types_of(in),
                "index {} is out of range for axis {} of size {} (valid indices are 0..size-1; negative "
                "indices are not supported)",
                i, axis, size);
  }
  return i;
}

// The shared shape rule of gather and scatter_add: index has x's rank, and outside `axis` its
// dimensions do not exceed x's.
void check_index_fits(const std::string& op, const std::vector<TensorType>& in, const TensorType& x,
                      const TensorType& index, int64_t axis, const char* x_name) {
  if (index.rank() != x.rank()) {
    ir::op_fail(op, in, "the index has rank {}, expected the rank of {} ({})", index.rank(), x_name, x.rank());
  }
  for (int64_t d = 0; d < x.rank(); ++d) {
    const size_t u = static_cast<size_t>(d);
    if (d != axis && index.shape[u] > x.shape[u]) {
      ir::op_fail(op, in, "index dimension {} has size {}, larger than {}'s {}", d, index.shape[u], x_name, x.shape[u]);
    }
  }
}

int64_t index_axis(const std::string& op, const std::vector<TensorType>& in, const Attrs& a) {
  if (in[0].rank() == 0) ir::op_fail(op, in, "expected a tensor of rank >= 1, got a scalar");
  return op_axis(op, in, a.get_int("axis"), in[0].rank());
}

Array gather_kernel(const std::vector<Array>& in, int64_t axis) {
  const Array& x = in[0];
  const Array& index = in[1];
  Array out = Array::empty(x.dtype(), index.shape());
  const Strides out_strides = contiguous_strides(index.shape());
  // x walked with index's shape and no step along `axis`: the index supplies that coordinate.
  Strides x_strides = x.strides();
  x_strides[static_cast<size_t>(axis)] = 0;
  const int64_t size = x.shape()[static_cast<size_t>(axis)], stride = x.strides()[static_cast<size_t>(axis)];
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using E = decltype(tag);
    const E* src = x.data<const E>();
    E* dst = out.data<E>();
    with_indices(index, [&](const auto* idx) {
      for_each_offset<3>(index.shape(), {&index.strides(), &x_strides, &out_strides}, {0, 0, 0},
                         [&](const std::array<int64_t, 3>& o) {
                           const int64_t i = checked_index("gather", in, idx[o[0]], axis, size);
                           dst[o[2]] = src[o[1] + i * stride];
                         });
    });
  });
  return out;
}

Array scatter_add_kernel(const std::vector<Array>& in, int64_t axis) {
  const Array& x = in[0];
  const Array& index = in[1];
  const Array& src = in[2];
  const Shape& shape = x.shape();
  Array out = Array::empty(x.dtype(), shape);
  Strides acc_strides = contiguous_strides(shape);
  const int64_t size = shape[static_cast<size_t>(axis)], stride = acc_strides[static_cast<size_t>(axis)];
  acc_strides[static_cast<size_t>(axis)] = 0;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using E = decltype(tag);
    if constexpr (!std::is_same_v<E, bool>) {
      // Accumulate in double (floats) or int64 (integers) so that f16 sums lose nothing on the way.
      using Acc = std::conditional_t<std::is_floating_point_v<compute_t<E>>, double, int64_t>;
      std::vector<Acc> acc(static_cast<size_t>(x.numel()));
      const Array xc = x.contiguous();
      const E* px = xc.data<const E>();
      for (size_t k = 0; k < acc.size(); ++k) acc[k] = static_cast<Acc>(static_cast<compute_t<E>>(px[k]));
      const E* ps = src.data<const E>();
      with_indices(index, [&](const auto* idx) {
        for_each_offset<3>(index.shape(), {&index.strides(), &src.strides(), &acc_strides}, {0, 0, 0},
                           [&](const std::array<int64_t, 3>& o) {
                             const int64_t i = checked_index("scatter_add", in, idx[o[0]], axis, size);
                             acc[static_cast<size_t>(o[2] + i * stride)] +=
                                 static_cast<Acc>(static_cast<compute_t<E>>(ps[o[1]]));
                           });
      });
      E* dst = out.data<E>();
      for (size_t k = 0; k < acc.size(); ++k) dst[k] = convert_element<E>(acc[k]);
    }
  });
  return out;
}

Array index_select_kernel(const std::vector<Array>& in, int64_t axis, const Shape& out_shape) {
  const Array& x = in[0];
  const Array& index = in[1];
  Array out = Array::empty(x.dtype(), out_shape);
  const int64_t size = x.shape()[static_cast<size_t>(axis)];
  with_indices(index, [&](const auto* idx) {
    for (int64_t k = 0; k < index.numel(); ++k) {
      const int64_t i = checked_index("index_select", in, idx[k * index.strides()[0]], axis, size);
      copy_into(x.slice(axis, i, i + 1), out.slice(axis, k, k + 1));
    }
  });
  return out;
}

Array one_hot_kernel(const std::vector<Array>& in, const TensorType& out_type) {
  const Array& index = in[0];
  const int64_t classes = out_type.shape.back();
  Array out = Array::zeros(out_type.dtype, out_type.shape);
  const Strides packed = contiguous_strides(index.shape());
  dispatch_dtype(out_type.dtype, [&](auto tag) {
    using E = decltype(tag);
    E* dst = out.data<E>();
    with_indices(index, [&](const auto* idx) {
      for_each_offset<2>(index.shape(), {&index.strides(), &packed}, {0, 0}, [&](const std::array<int64_t, 2>& o) {
        const int64_t i = checked_index("one_hot", in, idx[o[0]], index.rank(), classes);
        dst[o[1] * classes + i] = convert_element<E>(1);
      });
    });
  });
  return out;
}

// Whether `index` picks exactly one element of each line of x along `axis` (size 1 there, x's size
// elsewhere).
bool picks_one_per_line(const Shape& x, const Shape& index, int64_t axis) {
  if (x.size() != index.size()) return false;
  for (size_t d = 0; d < x.size(); ++d) {
    if (index[d] != (static_cast<int64_t>(d) == axis ? 1 : x[d])) return false;
  }
  return true;
}

}  // namespace

Tensor gather(const Tensor& x, int64_t axis, const Tensor& index) {
  return ir::make_node1("gather", {x, index}, Attrs{{"axis", axis}});
}

Tensor take_along_axis(const Tensor& x, const Tensor& index, int64_t axis) {
  return gather(x, axis, index);
}

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index) {
  return ir::make_node1("index_select", {x, index}, Attrs{{"axis", axis}});
}

Tensor scatter_add(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src) {
  return ir::make_node1("scatter_add", {x, index, src}, Attrs{{"axis", axis}});
}

Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype) {
  return ir::make_node1("one_hot", {indices}, Attrs{{"num_classes", num_classes}, {"dtype", dtype}});
}

void register_index_copy_ops(ir::OpRegistry& r);  // index_copy.cpp

void register_index_ops(ir::OpRegistry& r) {
  register_index_copy_ops(r);
  r.add(ir::OpDef{
      .name = "gather",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = {{"axis", ir::AttrKind::Int}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t axis = index_axis("gather", in, a);
        check_index_dtype("gather", in, in[1]);
        check_index_fits("gather", in, in[0], in[1], axis, "x");
        return {{in[0].dtype, in[1].shape}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        return {gather_kernel(in, normalize_axis(a.get_int("axis"), in[0].rank(), "gather"))};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Tensor x = c.input(0), index = c.input(1), g = c.cotangent();
        const int64_t axis = normalize_axis(c.attrs().get_int("axis"), x.rank(), "gather");
        if (picks_one_per_line(x.shape(), index.shape(), axis)) {
          // One value picked per line (a loss's target class): the gradient is g where the position along
          // the axis equals the index and 0 elsewhere, an elementwise expression that fuses into its
          // consumers instead of a zero fill and a scatter. A bad index was reported by the forward gather.
          Shape along(static_cast<size_t>(x.rank()), 1);
          along[static_cast<size_t>(axis)] = x.dim(axis);
          const Tensor positions = reshape(arange(x.dim(axis), index.dtype()), along);
          return {where(eq(index, positions), broadcast_to(g, x.shape()), zeros_like(x)), Value()};
        }
        return {scatter_add(zeros_like(x), axis, index, g), Value()};
      },
  });
  r.add(ir::OpDef{
      .name = "index_select",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = {{"axis", ir::AttrKind::Int}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t axis = index_axis("index_select", in, a);
        check_index_dtype("index_select", in, in[1]);
        if (in[1].rank() != 1) ir::op_fail("index_select", in, "the index must be 1-D, got rank {}", in[1].rank());
        TensorType t = in[0];
        t.shape[static_cast<size_t>(axis)] = in[1].shape[0];
        return {t};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        return {index_select_kernel(in, normalize_axis(a.get_int("axis"), in[0].rank(), "index_select"), out[0].shape)};
      },
      // scatter_add with the 1-D index broadcast over the other axes puts each selected slice back.
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Tensor x = c.input(0), g = c.cotangent();
        const int64_t axis = normalize_axis(c.attrs().get_int("axis"), x.rank(), "index_select");
        Shape along(static_cast<size_t>(x.rank()), 1);
        along[static_cast<size_t>(axis)] = g.shape()[static_cast<size_t>(axis)];
        const Tensor index = broadcast_to(reshape(c.input(1), along), g.shape());
        return {scatter_add(zeros_like(x), axis, index, g), Value()};
      },
  });
  r.add(ir::OpDef{
      .name = "scatter_add",
      .min_inputs = 3,
      .max_inputs = 3,
      .attrs = {{"axis", ir::AttrKind::Int}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t axis = index_axis("scatter_add", in, a);
        check_index_dtype("scatter_add", in, in[1]);
        if (in[0].dtype == DType::boolean) ir::op_fail("scatter_add", in, "expected a numeric dtype, got bool");
        if (in[2].dtype != in[0].dtype) {
          ir::op_fail("scatter_add", in, "src is {} but x is {}; they must match", dtype_name(in[2].dtype),
                      dtype_name(in[0].dtype));
        }
        check_index_fits("scatter_add", in, in[0], in[1], axis, "x");
        check_index_fits("scatter_add", in, in[2], in[1], -1, "src");
        return {in[0]};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        return {scatter_add_kernel(in, normalize_axis(a.get_int("axis"), in[0].rank(), "scatter_add"))};
      },
      // src elements the index does not cover (index smaller than src) get zero gradient.
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Tensor g = c.cotangent(), src = c.input(2);
        const Tensor picked = gather(g, c.attrs().get_int("axis"), c.input(1));
        std::vector<std::pair<int64_t, int64_t>> widths;
        for (int64_t d = 0; d < src.rank(); ++d) {
          widths.push_back({0, src.shape()[static_cast<size_t>(d)] - picked.shape()[static_cast<size_t>(d)]});
        }
        return {g, Value(), picked.shape() == src.shape() ? picked : pad(picked, widths)};
      },
  });
  r.add(ir::OpDef{
      .name = "one_hot",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"num_classes", ir::AttrKind::Int}, {"dtype", ir::AttrKind::DType}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        check_index_dtype("one_hot", in, in[0]);
        const int64_t classes = a.get_int("num_classes");
        if (classes <= 0) ir::op_fail("one_hot", in, "num_classes must be positive, got {}", classes);
        Shape shape = in[0].shape;
        shape.push_back(classes);
        return {{a.get_dtype("dtype"), shape}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs&, const std::vector<TensorType>& out)
          -> std::vector<Array> { return {one_hot_kernel(in, out[0])}; },
      // Integer indices get no gradient; the rule exists so that a path through the indices (from
      // argmax, say) ends here instead of failing.
      .vjp = [](const VjpContext&) -> std::vector<Value> { return {Value()}; },
  });
}

}  // namespace tessera::ops
