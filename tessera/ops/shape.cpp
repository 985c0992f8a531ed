// View-like shape ops that gradients of other ops rely on: reshape, permute, broadcast_to (and the
// composites flatten, transpose, squeeze, unsqueeze). On the reference backend they return views.
#include "tessera/ops/shape.h"

#include <algorithm>

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

Shape resolve_reshape(const std::vector<TensorType>& in, const Shape& requested) {
  Shape shape = requested;
  // `extent` multiplies the non-zero dimensions: the strides of the result must fit in 64 bits even
  // when a zero dimension makes it empty.
  int64_t infer_at = -1, known = 1, extent = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0) ir::op_fail("reshape", in, "more than one -1 in target shape {}", shape_str(requested));
      infer_at = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      ir::op_fail("reshape", in, "negative dimension in target shape {}", shape_str(requested));
    } else if (__builtin_mul_overflow(known, shape[i], &known) ||
               __builtin_mul_overflow(extent, std::max<int64_t>(shape[i], 1), &extent)) {
      ir::op_fail("reshape", in, "target shape {} is too large: its size overflows 64 bits", shape_str(requested));
    }
  }
  const int64_t n = in[0].numel();
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0) {
      ir::op_fail("reshape", in, "cannot infer -1 in {} for {} elements", shape_str(requested), n);
    }
    shape[static_cast<size_t>(infer_at)] = n / known;
  }
  if (shape_numel(shape) != n) {
    ir::op_fail("reshape", in, "target shape {} has {} elements, expected {}", shape_str(requested), shape_numel(shape), n);
  }
  return shape;
}

std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& axes) {
  std::vector<int64_t> inv(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) inv[static_cast<size_t>(axes[i])] = static_cast<int64_t>(i);
  return inv;
}
}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return ir::make_node1("reshape", {x}, Attrs{{"shape", shape}});
}

Tensor flatten(const Tensor& x, int64_t start_axis, int64_t end_axis) {
  if (x.rank() == 0) return reshape(x, {1});
  const int64_t s = normalize_axis(start_axis, x.rank(), "flatten");
  const int64_t e = normalize_axis(end_axis, x.rank(), "flatten");
  TESSERA_CHECK(s <= e, "flatten: start axis {} is after end axis {}", start_axis, end_axis);
  Shape shape(x.shape().begin(), x.shape().begin() + s);
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= x.shape()[static_cast<size_t>(d)];
  shape.push_back(merged);
  shape.insert(shape.end(), x.shape().begin() + e + 1, x.shape().end());
  return reshape(x, shape);
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& axes) {
  return ir::make_node1("permute", {x}, Attrs{{"axes", axes}});
}

Tensor transpose(const Tensor& x, int64_t a, int64_t b) {
  std::vector<int64_t> axes(static_cast<size_t>(x.rank()));
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  std::swap(axes[static_cast<size_t>(normalize_axis(a, x.rank(), "transpose"))],
            axes[static_cast<size_t>(normalize_axis(b, x.rank(), "transpose"))]);
  return permute(x, axes);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return ir::make_node1("broadcast_to", {x}, Attrs{{"shape", shape}});
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes) {
  std::vector<bool> drop(static_cast<size_t>(x.rank()), false);
  if (axes.empty()) {
    for (int64_t d = 0; d < x.rank(); ++d) drop[static_cast<size_t>(d)] = x.shape()[static_cast<size_t>(d)] == 1;
  }
  for (int64_t a : axes) {
    const int64_t d = normalize_axis(a, x.rank(), "squeeze");
    TESSERA_CHECK(x.shape()[static_cast<size_t>(d)] == 1, "squeeze: axis {} of shape {} has size {}, expected 1", a,
                  shape_str(x.shape()), x.shape()[static_cast<size_t>(d)]);
    drop[static_cast<size_t>(d)] = true;
  }
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!drop[static_cast<size_t>(d)]) shape.push_back(x.shape()[static_cast<size_t>(d)]);
  }
  return reshape(x, shape);
}

Tensor unsqueeze(const Tensor& x, int64_t axis) {
  const int64_t d = normalize_axis(axis, x.rank() + 1, "unsqueeze");
  Shape shape = x.shape();
  shape.insert(shape.begin() + d, 1);
  return reshape(x, shape);
}

void register_shape_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "reshape",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"shape", ir::AttrKind::Ints}},
      .traits = ir::kView | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        return {{in[0].dtype, resolve_reshape(in, a.get_ints("shape"))}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs&,
                      const std::vector<TensorType>& out) -> std::vector<Array> { return {in[0].reshape(out[0].shape)}; },
      .vjp = [](const VjpContext& c) -> std::vector<Value> { return {reshape(Tensor(c.cotangent()), c.input(0).shape())}; },
  });
  r.add(ir::OpDef{
      .name = "permute",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axes", ir::AttrKind::Ints}},
      .traits = ir::kView | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const auto& axes = a.get_ints("axes");
        if (static_cast<int64_t>(axes.size()) != in[0].rank()) {
          ir::op_fail("permute", in, "{} axes given for rank {}", axes.size(), in[0].rank());
        }
        Shape shape;
        std::vector<bool> seen(axes.size(), false);
        for (int64_t ax : axes) {
          if (ax < 0 || ax >= in[0].rank() || seen[static_cast<size_t>(ax)]) {
            ir::op_fail("permute", in, "axes {} are not a permutation of 0..{}", shape_str(axes), in[0].rank() - 1);
          }
          seen[static_cast<size_t>(ax)] = true;
          shape.push_back(in[0].shape[static_cast<size_t>(ax)]);
        }
        return {{in[0].dtype, shape}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> { return {in[0].permute(a.get_ints("axes"))}; },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {permute(Tensor(c.cotangent()), inverse_permutation(c.attrs().get_ints("axes")))};
      },
  });
  r.add(ir::OpDef{
      .name = "broadcast_to",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"shape", ir::AttrKind::Ints}},
      .traits = ir::kView | ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const Shape& to = a.get_ints("shape");
        const Shape& from = in[0].shape;
        bool ok = to.size() >= from.size();
        for (size_t i = 0; ok && i < from.size(); ++i) {
          const int64_t f = from[i], t = to[to.size() - from.size() + i];
          ok = f == t || f == 1;
        }
        for (int64_t d : to) ok = ok && d >= 0;
        if (!ok) ir::op_fail("broadcast_to", in, "cannot broadcast {} to {}", shape_str(from), shape_str(to));
        return {{in[0].dtype, to}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> { return {in[0].broadcast_to(a.get_ints("shape"))}; },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {sum_to_shape(Tensor(c.cotangent()), c.input(0).shape())};
      },
  });
  register_more_shape_ops(r);
}

}  // namespace tessera::ops
