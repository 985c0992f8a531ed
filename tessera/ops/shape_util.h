#pragma once
// Helpers shared by the slice/concat/pad family (shape_more.cpp, shape_pad.cpp): resolving Python
// slice bounds once, and copying an array into a strided view of a freshly allocated result.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/core/slice_range.h"
#include "tessera/core/strided.h"
#include "tessera/ir/op_def.h"

namespace tessera::ops {

// SliceRange, resolve_slice and python_bounds live in core (tessera/core/slice_range.h), below the
// lowering and the backends that resolve slices too.
using ::tessera::python_bounds;
using ::tessera::resolve_slice;
using ::tessera::SliceRange;

inline Array slice_view(const Array& x, int64_t axis, const SliceRange& r) {
  const auto b = python_bounds(r, x.shape()[static_cast<size_t>(axis)]);
  return x.slice(axis, b[0], b[1], b[2]);
}

// Writes src (converted to dst's dtype) into dst, a view of the same shape into an array the caller
// has just allocated. Never used to write into an op's input.
inline void copy_into(const Array& src, const Array& dst) {
  const Array s = src.dtype() == dst.dtype() ? src : src.astype(dst.dtype());
  dispatch_dtype(dst.dtype(), [&](auto tag) {
    using E = decltype(tag);
    const E* from = s.data<const E>();
    E* to = dst.data<E>();
    for_each_offset<2>(s.shape(), {&s.strides(), &dst.strides()}, {0, 0},
                       [&](const std::array<int64_t, 2>& o) { to[o[1]] = from[o[0]]; });
  });
}

// The types of kernel arguments, for error messages raised while evaluating.
inline std::vector<ir::TensorType> types_of(const std::vector<Array>& arrays) {
  std::vector<ir::TensorType> types;
  for (const Array& a : arrays) types.push_back({a.dtype(), a.shape()});
  return types;
}

// normalize_axis, reported as a failure of `op` with the given inputs.
inline int64_t op_axis(const std::string& op, const std::vector<ir::TensorType>& in, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    ir::op_fail(op, in, "axis {} is out of range for rank {} (expected {}..{})", axis, rank, -rank, rank - 1);
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace tessera::ops
