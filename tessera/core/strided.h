#pragma once
// Walks every element of a shape in row-major order while tracking the element offset of N strided
// operands at once (broadcast operands simply have stride 0). The reference kernels are built on it.
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/core/shape.h"

namespace tessera {

template <size_t N, class F>
void for_each_offset(const Shape& shape, const std::array<const Strides*, N>& strides,
                     const std::array<int64_t, N>& base, F&& f) {
  const int64_t total = shape_numel(shape);
  if (total == 0) return;
  const size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  std::array<int64_t, N> off = base;
  for (int64_t n = 0; n < total; ++n) {
    f(off);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += (*strides[k])[d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= (*strides[k])[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace tessera
