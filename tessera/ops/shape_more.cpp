// Slicing and joining: slice (and its adjoint slice_backward), concat, split, flip, with the
// composites stack and chunk. slice, split and flip return views on the reference backend.
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"
#include "tessera/ops/shape_util.h"

namespace tessera::ops {

void register_pad_ops(ir::OpRegistry& registry);  // shape_pad.cpp

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

// Checks that x is not a scalar and resolves the node's "axis" attribute against its rank.
int64_t axis_of(const std::string& op, const std::vector<TensorType>& in, const Attrs& a, const TensorType& x) {
  if (x.rank() == 0) ir::op_fail(op, in, "expected a tensor of rank >= 1, got a scalar");
  return op_axis(op, in, a.get_int("axis"), x.rank());
}

SliceRange node_slice(const Shape& shape, int64_t axis, const Attrs& a) {
  return resolve_slice(shape[static_cast<size_t>(axis)], a.get_int("start"), a.get_int("stop"), a.get_int("step"));
}

// slice_backward's placement, checked to lie inside 0..size-1 (without overflowing on huge steps).
SliceRange placement(const std::vector<TensorType>& in, int64_t axis, const Attrs& a) {
  const int64_t start = a.get_int("start"), step = a.get_int("step"), size = a.get_int("size");
  const int64_t count = in[0].shape[static_cast<size_t>(axis)];
  if (size < 0) ir::op_fail("slice_backward", in, "size must be non-negative, got {}", size);
  if (step == 0) ir::op_fail("slice_backward", in, "step must not be zero");
  if (count == 0) return {};
  bool fits = start >= 0 && start < size;
  if (fits && count > 1) {
    const uint64_t step_abs = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
    const uint64_t room = static_cast<uint64_t>(step > 0 ? size - 1 - start : start);
    fits = room / step_abs >= static_cast<uint64_t>(count - 1);
  }
  if (!fits) {
    ir::op_fail("slice_backward", in, "{} elements from {} with step {} do not fit in an axis of size {}", count, start,
                step, size);
  }
  return {start, count, count > 1 ? step : 1};
}

std::vector<TensorType> concat_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const int64_t axis = axis_of("concat", in, a, in[0]);
  Shape shape = in[0].shape;
  DType dtype = in[0].dtype;
  for (size_t i = 1; i < in.size(); ++i) {
    bool same = in[i].rank() == in[0].rank();
    for (int64_t d = 0; same && d < in[0].rank(); ++d) {
      same = d == axis || in[i].shape[static_cast<size_t>(d)] == in[0].shape[static_cast<size_t>(d)];
    }
    if (!same) {
      ir::op_fail("concat", in, "input {} has shape {}, which differs from input 0's shape {} outside axis {}", i,
                  shape_str(in[i].shape), shape_str(in[0].shape), axis);
    }
    if (__builtin_add_overflow(shape[static_cast<size_t>(axis)], in[i].shape[static_cast<size_t>(axis)],
                               &shape[static_cast<size_t>(axis)])) {
      ir::op_fail("concat", in, "the sizes along axis {} add up to more than 64 bits hold", axis);
    }
    dtype = promote_types(dtype, in[i].dtype);
  }
  return {{dtype, shape}};
}

std::vector<TensorType> split_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const int64_t axis = axis_of("split", in, a, in[0]);
  const std::vector<int64_t>& sizes = a.get_ints("sizes");
  if (sizes.empty()) ir::op_fail("split", in, "expected at least one piece size");
  int64_t total = 0;
  std::vector<TensorType> out;
  for (int64_t s : sizes) {
    if (s < 0) ir::op_fail("split", in, "piece sizes {} must be non-negative", shape_str(sizes));
    if (__builtin_add_overflow(total, s, &total)) {
      ir::op_fail("split", in, "piece sizes {} add up to more than 64 bits hold", shape_str(sizes));
    }
    TensorType t = in[0];
    t.shape[static_cast<size_t>(axis)] = s;
    out.push_back(std::move(t));
  }
  if (total != in[0].shape[static_cast<size_t>(axis)]) {
    ir::op_fail("split", in, "piece sizes {} add up to {}, but axis {} has size {}", shape_str(sizes), total, axis,
                in[0].shape[static_cast<size_t>(axis)]);
  }
  return out;
}

// The flipped axes of a flip node, normalised; a repeated axis is an error (flipping twice would
// silently undo the flip).
std::vector<int64_t> flip_axes(const std::vector<TensorType>& in, const Attrs& a) {
  std::vector<int64_t> axes;
  for (int64_t ax : a.get_ints("axes")) {
    const int64_t d = op_axis("flip", in, ax, in[0].rank());
    if (std::find(axes.begin(), axes.end(), d) != axes.end()) {
      ir::op_fail("flip", in, "axis {} appears more than once in {}", d, shape_str(a.get_ints("axes")));
    }
    axes.push_back(d);
  }
  return axes;
}

}  // namespace

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step) {
  return ir::make_node1("slice", {x}, Attrs{{"axis", axis}, {"start", start}, {"stop", stop}, {"step", step}});
}

Tensor slice(const Tensor& x, int64_t axis, int64_t start) {
  return slice(x, axis, start, kEnd);
}

Tensor slice_backward(const Tensor& g, int64_t axis, int64_t start, int64_t step, int64_t size) {
  return ir::make_node1("slice_backward", {g}, Attrs{{"axis", axis}, {"start", start}, {"step", step}, {"size", size}});
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  TESSERA_CHECK(!xs.empty(), "concat: expected at least one tensor, got none");
  return ir::make_node1("concat", std::vector<Value>(xs.begin(), xs.end()), Attrs{{"axis", axis}});
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  TESSERA_CHECK(!xs.empty(), "stack: expected at least one tensor, got none");
  for (size_t i = 1; i < xs.size(); ++i) {
    TESSERA_CHECK(xs[i].shape() == xs[0].shape(), "stack: tensor {} has shape {}, but tensor 0 has shape {}", i,
                  shape_str(xs[i].shape()), shape_str(xs[0].shape()));
  }
  const int64_t d = normalize_axis(axis, xs[0].rank() + 1, "stack");
  std::vector<Tensor> expanded;
  for (const Tensor& x : xs) expanded.push_back(unsqueeze(x, d));
  return concat(expanded, d);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  const std::vector<Value> outs = ir::make_node("split", {x}, Attrs{{"axis", axis}, {"sizes", sizes}});
  return std::vector<Tensor>(outs.begin(), outs.end());
}

std::vector<Tensor> chunk(const Tensor& x, int64_t sections, int64_t axis) {
  const int64_t d = normalize_axis(axis, x.rank(), "chunk");
  const int64_t n = x.shape()[static_cast<size_t>(d)];
  TESSERA_CHECK(sections > 0 && n % sections == 0,
                "chunk: axis {} of shape {} (size {}) cannot be split into {} equal pieces", axis, shape_str(x.shape()),
                n, sections);
  return split(x, std::vector<int64_t>(static_cast<size_t>(sections), n / sections), d);
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& axes) {
  return ir::make_node1("flip", {x}, Attrs{{"axes", axes}});
}

void register_more_shape_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "slice",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axis", ir::AttrKind::Int},
                {"start", ir::AttrKind::Int},
                {"stop", ir::AttrKind::Int},
                {"step", ir::AttrKind::Int}},
      .traits = ir::kView | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t axis = axis_of("slice", in, a, in[0]);
        if (a.get_int("step") == 0) ir::op_fail("slice", in, "step must not be zero");
        TensorType t = in[0];
        t.shape[static_cast<size_t>(axis)] = node_slice(in[0].shape, axis, a).count;
        return {t};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        const int64_t axis = normalize_axis(a.get_int("axis"), in[0].rank(), "slice");
        return {slice_view(in[0], axis, node_slice(in[0].shape(), axis, a))};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Shape& shape = c.input(0).shape();
        const int64_t axis = normalize_axis(c.attrs().get_int("axis"), c.input(0).rank(), "slice");
        const SliceRange s = node_slice(shape, axis, c.attrs());
        return {slice_backward(Tensor(c.cotangent()), axis, s.start, s.step, shape[static_cast<size_t>(axis)])};
      },
  });
  r.add(ir::OpDef{
      .name = "slice_backward",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axis", ir::AttrKind::Int},
                {"start", ir::AttrKind::Int},
                {"step", ir::AttrKind::Int},
                {"size", ir::AttrKind::Int}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t axis = axis_of("slice_backward", in, a, in[0]);
        placement(in, axis, a);
        TensorType t = in[0];
        t.shape[static_cast<size_t>(axis)] = a.get_int("size");
        return {t};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const int64_t axis = normalize_axis(a.get_int("axis"), in[0].rank(), "slice_backward");
        Array o = Array::zeros(out[0].dtype, out[0].shape);
        copy_into(in[0], slice_view(o, axis, placement(types_of(in), axis, a)));
        return {o};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const int64_t axis = normalize_axis(c.attrs().get_int("axis"), c.input(0).rank(), "slice_backward");
        const int64_t size = c.attrs().get_int("size");
        const auto b = python_bounds(placement({c.input(0).type()}, axis, c.attrs()), size);
        return {slice(Tensor(c.cotangent()), axis, b[0], b[1], b[2])};
      },
  });
  r.add(ir::OpDef{
      .name = "concat",
      .min_inputs = 1,
      .max_inputs = -1,
      .attrs = {{"axis", ir::AttrKind::Int}},
      .infer = concat_infer,
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const int64_t axis = normalize_axis(a.get_int("axis"), in[0].rank(), "concat");
        Array o = Array::empty(out[0].dtype, out[0].shape);
        int64_t pos = 0;
        for (const Array& x : in) {
          const int64_t len = x.shape()[static_cast<size_t>(axis)];
          copy_into(x, o.slice(axis, pos, pos + len));
          pos += len;
        }
        return {o};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const int64_t axis = normalize_axis(c.attrs().get_int("axis"), c.input(0).rank(), "concat");
        std::vector<Value> grads;
        int64_t pos = 0;
        for (const Value& x : c.inputs) {
          const int64_t len = x.shape()[static_cast<size_t>(axis)];
          if (is_floating(x.dtype())) {
            grads.push_back(cast(slice(Tensor(c.cotangent()), axis, pos, pos + len), x.dtype()));
          } else {
            grads.emplace_back();
          }
          pos += len;
        }
        return grads;
      },
  });
  r.add(ir::OpDef{
      .name = "split",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axis", ir::AttrKind::Int}, {"sizes", ir::AttrKind::Ints}},
      .traits = ir::kView,
      .infer = split_infer,
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        const int64_t axis = normalize_axis(a.get_int("axis"), in[0].rank(), "split");
        std::vector<Array> pieces;
        int64_t pos = 0;
        for (int64_t s : a.get_ints("sizes")) {
          pieces.push_back(in[0].slice(axis, pos, pos + s));
          pos += s;
        }
        return pieces;
      },
      // Pieces that received no cotangent contribute zeros.
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const int64_t axis = normalize_axis(c.attrs().get_int("axis"), c.input(0).rank(), "split");
        std::vector<Tensor> parts;
        for (size_t i = 0; i < c.outputs.size(); ++i) {
          parts.push_back(c.cotangent(i).defined() ? Tensor(c.cotangent(i)) : zeros_like(Tensor(c.output(i))));
        }
        return {parts.size() == 1 ? parts[0] : concat(parts, axis)};
      },
  });
  r.add(ir::OpDef{
      .name = "flip",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axes", ir::AttrKind::Ints}},
      .traits = ir::kView | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        flip_axes(in, a);
        return {in[0]};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        Array v = in[0];
        for (int64_t ax : flip_axes(types_of(in), a)) {
          const int64_t n = v.shape()[static_cast<size_t>(ax)];
          v = slice_view(v, ax, SliceRange{n - 1, n, -1});
        }
        return {v};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {flip(Tensor(c.cotangent()), c.attrs().get_ints("axes"))};
      },
  });
  register_pad_ops(r);
}

}  // namespace tessera::ops
