#pragma once
// Where each output position of a resampled axis reads from: the one definition behind the upsample
// ops' reference kernels and their StableHLO lowering, so both pick the same source elements.
// Conventions are PyTorch's (aten/src/ATen/native/UpSample.h) for mode 'nearest', 'nearest-exact' and
// 'linear' (bilinear, trilinear, ... one axis at a time).
#include <cstdint>
#include <string>

namespace tessera::ops::resample {

enum class Mode { nearest, nearest_exact, linear };

// "nearest" | "nearest-exact" | "linear"; false for anything else.
bool parse_mode(const std::string& name, Mode* mode);

// One axis of in -> out elements. scale > 0 is a scale factor the user gave (PyTorch's scale_factor with
// recompute_scale_factor=False): the coordinate ratio is then 1 / scale instead of in / out.
struct Axis {
  int64_t in = 1, out = 1;
  double scale = 0.0;  // 0: none, the ratio is in / out
};

// The nearest modes: src = floor(dst * ratio) or floor((dst + 0.5) * ratio), clamped to in - 1. By size
// the ratio in / out is applied exactly in integers; with a scale factor, 1 / scale is rounded to f32
// and the product floored in f32, as PyTorch computes it, so that the indices equal PyTorch's.
int64_t nearest_source(const Axis& axis, int64_t dst, bool exact);

// Linear interpolation reads lo and hi with weights 1 - frac and frac. align_corners maps the corner
// centres onto each other: src = dst * (in - 1) / (out - 1) (scale factors ignored, as PyTorch);
// otherwise src = max((dst + 0.5) * ratio - 0.5, 0) with ratio in / out or 1 / scale.
struct LinearTap {
  int64_t lo = 0, hi = 0;
  double frac = 0.0;
};
LinearTap linear_source(const Axis& axis, int64_t dst, bool align_corners);

}  // namespace tessera::ops::resample
