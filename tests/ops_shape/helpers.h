#pragma once
// Small independent helpers for the shape-op tests: expected values are computed from index
// arithmetic here, never from the ops under test.
#include <cstdint>
#include <vector>

#include "test_util.h"

namespace tessera::test {

inline std::vector<double> iota(int64_t n, double start = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i);
  return v;
}

// A tensor holding 0, 1, 2, ... in row-major order, so that each value is its own flat index.
inline Tensor iota_tensor(const Shape& shape, DType dtype = DType::f32) {
  return Tensor::from_array(Array::from_vector(iota(shape_numel(shape)), shape).astype(dtype));
}

// Row-major flat index of `index` in `shape`.
inline int64_t flat_index(const Shape& shape, const std::vector<int64_t>& index) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + index[d];
  return f;
}

// Calls f(index) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F f) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < shape_numel(shape); ++n) {
    f(index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// Expected values of an op on iota_tensor(in_shape): out[i] = source(i), the flat input index that
// output index i reads.
template <class F>
std::vector<double> expected_from(const Shape& out_shape, const Shape& in_shape, F source) {
  std::vector<double> v;
  for_each_index(out_shape, [&](const std::vector<int64_t>& i) {
    v.push_back(static_cast<double>(flat_index(in_shape, source(i))));
  });
  return v;
}

}  // namespace tessera::test
