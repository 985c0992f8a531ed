// Source coordinates of resampling (see resample_coords.h).
#include "tessera/ops/resample_coords.h"

#include <algorithm>
#include <cmath>

namespace tessera::ops::resample {

bool parse_mode(const std::string& name, Mode* mode) {
  if (name == "nearest") {
    *mode = Mode::nearest;
  } else if (name == "nearest-exact") {
    *mode = Mode::nearest_exact;
  } else if (name == "linear") {
    *mode = Mode::linear;
  } else {
    return false;
  }
  return true;
}

int64_t nearest_source(const Axis& axis, int64_t dst, bool exact) {
  int64_t src = 0;
  if (axis.scale > 0.0) {
    // PyTorch (nearest_idx / nearest_exact_idx): 'nearest' copies when out == in and halves when
    // out == 2 in, else floors float(dst) * ratio in f32 with ratio = float(1 / scale); 'nearest-exact'
    // floors (dst + 0.5) * ratio (a double) after rounding it to f32 (floorf).
    if (!exact && axis.out == axis.in) return dst;
    if (!exact && axis.out == 2 * axis.in) return dst / 2;
    const float ratio = static_cast<float>(1.0 / axis.scale);
    src = exact ? static_cast<int64_t>(std::floor(static_cast<float>((static_cast<double>(dst) + 0.5) * ratio)))
                : static_cast<int64_t>(std::floor(static_cast<float>(dst) * ratio));
  } else {
    src = exact ? (2 * dst + 1) * axis.in / (2 * axis.out) : dst * axis.in / axis.out;
  }
  return std::min(src, axis.in - 1);
}

LinearTap linear_source(const Axis& axis, int64_t dst, bool align_corners) {
  const double d = static_cast<double>(dst);
  double src = 0.0;
  if (align_corners) {
    src = axis.out > 1 ? d * static_cast<double>(axis.in - 1) / static_cast<double>(axis.out - 1) : 0.0;
  } else {
    const double ratio =
        axis.scale > 0.0 ? 1.0 / axis.scale : static_cast<double>(axis.in) / static_cast<double>(axis.out);
    src = std::max(ratio * (d + 0.5) - 0.5, 0.0);
  }
  LinearTap t;
  t.lo = std::min(static_cast<int64_t>(src), axis.in - 1);
  t.hi = t.lo < axis.in - 1 ? t.lo + 1 : t.lo;
  t.frac = src - static_cast<double>(t.lo);
  return t;
}

}  // namespace tessera::ops::resample
