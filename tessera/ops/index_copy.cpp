// index_copy: x with whole slices along an axis replaced by the slices of src (torch.index_copy) — the
// write of a KV cache's new rows; with `convert`, a floating src of another dtype is rounded to x's as
// it is written (an f16 cache's rows from f32 keys). Its decomposition (a scatter_add into zeros and a select) serves
// backends without a kernel and the StableHLO exporter; its gradient is the decomposition's.
#include <cstring>

#include "tessera/autodiff/decomposed_vjp.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"
#include "tessera/ops/shape_util.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;

constexpr const char* kIndexCopyOp = "index_copy";

std::vector<TensorType> infer_index_copy(const std::vector<TensorType>& in, const Attrs& a) {
  const TensorType &x = in[0], &index = in[1], &src = in[2];
  if (x.rank() == 0) ir::op_fail(kIndexCopyOp, in, "expected x of rank >= 1, got a scalar");
  const int64_t axis = op_axis(kIndexCopyOp, in, a.get_int("axis"), x.rank());
  if (index.dtype != DType::i32 && index.dtype != DType::i64) {
    ir::op_fail(kIndexCopyOp, in, "indices must be i32 or i64, got {}", dtype_name(index.dtype));
  }
  if (index.rank() != 1) ir::op_fail(kIndexCopyOp, in, "the index must be 1-D, got rank {}", index.rank());
  if (src.dtype != x.dtype) {
    if (!a.get_bool_or("convert", false)) {
      ir::op_fail(kIndexCopyOp, in, "src is {} but x is {}; they must match (or set convert for floating types)",
                  dtype_name(src.dtype), dtype_name(x.dtype));
    }
    if (!is_floating(src.dtype) || !is_floating(x.dtype)) {
      ir::op_fail(kIndexCopyOp, in, "convert takes floating src and x, got {} into {}", dtype_name(src.dtype),
                  dtype_name(x.dtype));
    }
  }
  Shape expected = x.shape;
  expected[static_cast<size_t>(axis)] = index.shape[0];
  if (src.shape != expected) {
    ir::op_fail(kIndexCopyOp, in, "src must have x's shape with axis {} of the index's length, i.e. {}; got {}", axis,
                shape_str(expected), shape_str(src.shape));
  }
  return {x};
}

// Checks every index (in range, none repeated) before anything is written; returns them as int64.
std::vector<int64_t> checked_rows(const std::vector<Array>& in, int64_t axis) {
  const int64_t size = in[0].shape()[static_cast<size_t>(axis)];
  std::vector<int64_t> rows = in[1].astype(DType::i64).contiguous().to_vector<int64_t>();
  std::vector<bool> seen(static_cast<size_t>(size), false);
  for (const int64_t r : rows) {
    if (r < 0 || r >= size) {
      ir::op_fail(kIndexCopyOp, types_of(in), "index {} is out of range for axis {} of size {} (valid indices are 0..size-1)", r,
                  axis, size);
    }
    if (seen[static_cast<size_t>(r)]) {
      ir::op_fail(kIndexCopyOp, types_of(in), "index {} appears twice: each slice may be written once", r);
    }
    seen[static_cast<size_t>(r)] = true;
  }
  return rows;
}

Array index_copy_kernel(const std::vector<Array>& in, int64_t axis) {
  const std::vector<int64_t> rows = checked_rows(in, axis);
  // src in x's dtype (rounded to nearest even as astype does) when they differ (the convert attribute).
  const Array x = in[0].contiguous(), src = in[2].astype(in[0].dtype()).contiguous();
  Array out = x.copy();
  const Shape& shape = x.shape();
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(x.dtype()));
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t size = shape[static_cast<size_t>(axis)], m = static_cast<int64_t>(rows.size());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  const auto* from = static_cast<const std::byte*>(src.raw_data());
  for (int64_t o = 0; o < outer && inner > 0; ++o) {
    for (int64_t i = 0; i < m; ++i) {
      std::memcpy(dst + (o * size + rows[static_cast<size_t>(i)]) * inner, from + (o * m + i) * inner,
                  static_cast<size_t>(inner));
    }
  }
  return out;
}

// where(covered, scatter_add(zeros, index, src), x), with `covered` marking the written slices.
std::vector<Value> decompose_index_copy(const std::vector<Value>& in, const Attrs& a) {
  const Tensor x0(in[0]), index(in[1]);
  const Tensor src0 = Tensor(in[2]).dtype() == x0.dtype() ? Tensor(in[2]) : cast(Tensor(in[2]), x0.dtype());
  const int64_t axis = normalize_axis(a.get_int("axis"), x0.rank(), kIndexCopyOp);
  const bool boolean = x0.dtype() == DType::boolean;  // scatter_add takes numbers
  const Tensor x = boolean ? cast(x0, DType::i32) : x0, src = boolean ? cast(src0, DType::i32) : src0;
  Shape along(static_cast<size_t>(x.rank()), 1);
  along[static_cast<size_t>(axis)] = index.dim(0);
  const Tensor spread = broadcast_to(reshape(index, along), src.shape());
  const Tensor scattered = scatter_add(zeros_like(x), axis, spread, src);
  const int64_t size = x.dim(axis);
  const Tensor hits = scatter_add(zeros({size}, DType::f32), 0, index, ones({index.dim(0)}, DType::f32));
  Shape mask_shape(static_cast<size_t>(x.rank()), 1);
  mask_shape[static_cast<size_t>(axis)] = size;
  const Tensor covered = reshape(gt(hits, scalar_like(hits, 0.0)), mask_shape);
  const Tensor out = where(covered, scattered, x);
  return {(boolean ? cast(out, DType::boolean) : out).value()};
}

}  // namespace

Tensor index_copy(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src) {
  return ir::make_node1(kIndexCopyOp, {x, index, src}, {{"axis", axis}});
}

Tensor index_copy_converted(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src) {
  if (src.dtype() == x.dtype()) return index_copy(x, axis, index, src);
  return ir::make_node1(kIndexCopyOp, {x, index, src}, {{"axis", axis}, {"convert", true}});
}

void register_index_copy_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = kIndexCopyOp,
      .min_inputs = 3,
      .max_inputs = 3,
      .attrs = {{"axis", ir::AttrKind::Int}, {"convert", ir::AttrKind::Bool, false}},
      .infer = infer_index_copy,
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        return {index_copy_kernel(in, normalize_axis(a.get_int("axis"), in[0].rank(), kIndexCopyOp))};
      },
      .vjp = autodiff::vjp_through_decomposition,
      .decompose = decompose_index_copy,
  });
}

}  // namespace tessera::ops
