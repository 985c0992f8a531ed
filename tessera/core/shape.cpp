#include "tessera/core/shape.h"

#include <algorithm>

#include "tessera/core/error.h"

namespace tessera {

int64_t shape_numel(const Shape& shape) {
  // Checked: a hostile shape (a parsed file, a fuzzer) must fail cleanly instead of overflowing.
  int64_t n = 1;
  for (int64_t d : shape) {
    TESSERA_CHECK(!__builtin_mul_overflow(n, d, &n), "shape {} has more elements than fit in 64 bits",
                  shape_str(shape));
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    TESSERA_CHECK(!__builtin_mul_overflow(stride, std::max<int64_t>(shape[i], 1), &stride),
                  "shape {} is too large: its strides overflow 64 bits", shape_str(shape));
  }
  return strides;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  TESSERA_CHECK(a >= 0 && a < rank, "{}: axis {} is out of range for a tensor of rank {} (expected {}..{})", what,
                axis, rank, -rank, rank - 1);
  return a;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank, const char* what,
                                    bool empty_is_all) {
  std::vector<int64_t> out;
  if (axes.empty() && empty_is_all) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) out.push_back(normalize_axis(a, rank, what));
  std::sort(out.begin(), out.end());
  TESSERA_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), "{}: repeated axis in {}", what,
                shape_str(axes));
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* what) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    TESSERA_CHECK(da == db || da == 1 || db == 1,
                  "{}: shapes {} and {} do not broadcast (dimension {} from the right: {} vs {})", what,
                  shape_str(a), shape_str(b), rank - i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace tessera
