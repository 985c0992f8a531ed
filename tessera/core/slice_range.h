#pragma once
// A slice of one axis under Python semantics, resolved once: the slice ops' shape rules and kernels
// (ops/shape_util.h), the loop lowering and the backends' view kernels all count the same elements.
#include <algorithm>
#include <array>
#include <cstdint>

namespace tessera {

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

}  // namespace tessera
