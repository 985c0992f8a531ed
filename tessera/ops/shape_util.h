#pragma once
// Helpers shared by the slice/concat/pad family (shape_more.cpp, shape_pad.cpp): resolving Python
// slice bounds once, and copying an array into a strided view of a freshly allocated result.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/core/strided.h"
#include "tessera/ir/op_def.h"

namespace tessera::ops {

// A slice of one axis resolved to its first index, element count and step. A slice of at most one
// element gets step 1, so that no later arithmetic on a huge step can overflow.
struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
  int64_t step = 1;
};

// Python semantics on an axis of length n: negative start/stop count from the end, both clamp.
// `step` must be non-zero.
inline SliceRange resolve_slice(int64_t n, int64_t start, int64_t stop, int64_t step) {
  auto clamp_index = [&](int64_t i) {
    if (i < 0) i += n;
    return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t s = clamp_index(start), e = clamp_index(stop);
  SliceRange r;
  // (e - s - 1) / step + 1 rather than the usual rounding-up form, which overflows for a huge step.
  if (step > 0 && e > s) r.count = (e - s - 1) / step + 1;
  if (step < 0 && s > e) r.count = -((s - e - 1) / step) + 1;
  if (r.count > 0) r.start = s;
  r.step = r.count > 1 ? step : 1;
  return r;
}

// (start, stop, step) that select exactly `r` under Python semantics on an axis of length n. A
// negative-step slice ending at index 0 needs a stop below -n, since -1 would mean "the last".
inline std::array<int64_t, 3> python_bounds(const SliceRange& r, int64_t n) {
  if (r.count == 0) return {0, 0, 1};
  const int64_t last = r.start + (r.count - 1) * r.step;
  if (r.step > 0) return {r.start, last + 1, r.step};
  return {r.start, last == 0 ? -n - 1 : last - 1, r.step};
}

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
