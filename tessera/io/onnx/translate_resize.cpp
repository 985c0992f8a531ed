// Resize (and the older Upsample) as separable gathers: for each resized axis the source positions of
// the output samples are computed here, from the coordinate transformation, the mode and the sizes,
// into constant index and weight vectors; the result is a weighted sum of index_selects along the axis
// (one tap for nearest, two for linear, four for cubic). That covers every coordinate mode, rounding
// rule and the cubic options exactly, with no resampling kernel of its own.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/index.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

struct ResizeAttrs {
  std::string mode = "nearest";
  std::string coordinates = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

// One axis: taps[k][o] is the source index of tap k for output o, weights[k][o] its weight; `inside[o]`
// is false where tf_crop_and_resize samples outside the input.
struct AxisPlan {
  std::vector<std::vector<int64_t>> taps;
  std::vector<std::vector<double>> weights;
  std::vector<bool> inside;
};

double source_coordinate(const NodeContext& c, const ResizeAttrs& a, int64_t o, int64_t in, int64_t out,
                         double scale, double roi_start, double roi_end) {
  const double x = static_cast<double>(o);
  const std::string& m = a.coordinates;
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  // The resized length is in * scale, unrounded (out when sizes were given), as ONNX's reference has it.
  if (m == "align_corners") {
    const double length = static_cast<double>(in) * scale;
    return length == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (length - 1);
  }
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m == "tf_crop_and_resize") {
    const double span = static_cast<double>(in - 1);
    if (out == 1) return 0.5 * (roi_start + roi_end) * span;
    return roi_start * span + x * (roi_end - roi_start) * span / static_cast<double>(out - 1);
  }
  c.fail("coordinate_transformation_mode {} is not supported", m);
}

int64_t round_nearest(const NodeContext& c, const std::string& rule, double x) {
  const double f = std::floor(x);
  if (rule == "floor") return static_cast<int64_t>(f);
  if (rule == "ceil") return static_cast<int64_t>(std::ceil(x));
  const bool half = x - f == 0.5;
  if (rule == "round_prefer_floor") return static_cast<int64_t>(half ? f : std::round(x));
  if (rule == "round_prefer_ceil") return static_cast<int64_t>(half ? f + 1 : std::round(x));
  c.fail("nearest_mode {} is not supported", rule);
}

std::vector<double> cubic_coefficients(double t, double a) {
  auto outer = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 <= d < 2
  auto inner = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // d < 1
  return {outer(t + 1), inner(t), inner(1 - t), outer(2 - t)};
}

AxisPlan plan_axis(const NodeContext& c, const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start,
                   double roi_end) {
  const int taps = a.mode == "nearest" ? 1 : a.mode == "linear" ? 2 : 4;
  AxisPlan p;
  p.taps.assign(static_cast<size_t>(taps), std::vector<int64_t>(static_cast<size_t>(out)));
  p.weights.assign(static_cast<size_t>(taps), std::vector<double>(static_cast<size_t>(out)));
  p.inside.assign(static_cast<size_t>(out), true);
  auto clamp_index = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    const size_t u = static_cast<size_t>(o);
    const double x = source_coordinate(c, a, o, in, out, scale, roi_start, roi_end);
    if (a.coordinates == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) p.inside[u] = false;
    if (taps == 1) {
      p.taps[0][u] = clamp_index(round_nearest(c, a.nearest, x));
      p.weights[0][u] = 1;
      continue;
    }
    const double base = std::floor(x), t = x - base;
    const int64_t i0 = static_cast<int64_t>(base);
    const std::vector<double> w = taps == 2 ? std::vector<double>{1 - t, t} : cubic_coefficients(t, a.cubic_a);
    const int64_t first = taps == 2 ? i0 : i0 - 1;
    double total = 0;
    for (int k = 0; k < taps; ++k) {
      const int64_t i = first + k;
      const bool outside = i < 0 || i >= in;
      p.taps[static_cast<size_t>(k)][u] = clamp_index(i);
      p.weights[static_cast<size_t>(k)][u] = a.exclude_outside && outside ? 0.0 : w[static_cast<size_t>(k)];
      total += p.weights[static_cast<size_t>(k)][u];
    }
    if (a.exclude_outside && total != 0) {
      for (int k = 0; k < taps; ++k) p.weights[static_cast<size_t>(k)][u] /= total;
    }
  }
  return p;
}

Tensor resample_axis(const Tensor& x, int64_t axis, const AxisPlan& p) {
  Shape weight_shape(static_cast<size_t>(x.rank()), 1);
  weight_shape[static_cast<size_t>(axis)] = static_cast<int64_t>(p.inside.size());
  const int64_t out = static_cast<int64_t>(p.inside.size());
  Tensor sum;
  for (size_t k = 0; k < p.taps.size(); ++k) {
    const Tensor picked = ops::index_select(x, axis, Tensor::from_vector<int64_t>(p.taps[k], {out}));
    if (p.taps.size() == 1) return picked;
    const Tensor w = ops::cast(Tensor::from_vector<double>(p.weights[k], weight_shape), x.dtype());
    sum = sum.defined() ? sum + picked * w : picked * w;
  }
  return sum;
}

// Resize-18's attributes, folded into full-rank scales, sizes and roi: `axes` names the axes the three
// inputs cover (the others keep their length); keep_aspect_ratio_policy turns sizes into one scale for
// those axes (the smallest or largest ratio, lengths rounded half up; `size_scales` gets that ratio, which
// the coordinate transformation uses); antialias changes only what shrinks with a linear or cubic
// filter, which is refused rather than computed without the filter.
void apply_resize18_attributes(NodeContext& c, const Shape& shape, const std::string& mode, std::vector<double>& scales,
                               std::vector<int64_t>& sizes, std::vector<double>& roi, std::vector<double>& size_scales) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const std::vector<int64_t> axes = c.has_attr("axes") ? normalize_axes(c, c.attr_ints("axes"), rank) : std::vector<int64_t>{};
  const std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    c.fail("keep_aspect_ratio_policy {} is not stretch, not_larger or not_smaller", policy);
  }
  if (!axes.empty()) {
    if (!scales.empty()) scales = spread_over_axes(c, "scales", scales, axes, std::vector<double>(shape.size(), 1.0));
    if (!sizes.empty()) sizes = spread_over_axes(c, "sizes", sizes, axes, std::vector<int64_t>(shape.begin(), shape.end()));
    if (!roi.empty()) {
      std::vector<double> whole(2 * shape.size(), 0.0);  // begins 0, ends 1: the whole axis
      std::fill(whole.begin() + static_cast<std::ptrdiff_t>(shape.size()), whole.end(), 1.0);
      roi = spread_over_axes(c, "roi", roi, axes, std::move(whole), /*pairs=*/true);
    }
  }
  if (policy != "stretch" && !sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != rank) c.fail("sizes has {} entries for rank {}", sizes.size(), rank);
    const std::vector<int64_t> covered = axes_or_all(axes, rank);
    double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (const int64_t a : covered) {
      const size_t u = static_cast<size_t>(a);
      if (shape[u] == 0) c.fail("axis {} is empty", a);
      const double ratio = static_cast<double>(sizes[u]) / static_cast<double>(shape[u]);
      scale = policy == "not_larger" ? std::min(scale, ratio) : std::max(scale, ratio);
    }
    size_scales.assign(static_cast<size_t>(rank), 1.0);
    for (const int64_t a : covered) {
      const size_t u = static_cast<size_t>(a);
      sizes[u] = static_cast<int64_t>(std::floor(scale * static_cast<double>(shape[u]) + 0.5));
      size_scales[u] = scale;
    }
  }
  if (c.attr_int("antialias", 0) != 0 && mode != "nearest") {
    for (size_t i = 0; i < shape.size(); ++i) {
      const bool shrinks = scales.empty() ? sizes[i] < shape[i] : scales[i] < 1.0;
      if (shrinks) c.fail("antialias = 1 when axis {} shrinks is not supported (the filter would change the result)", i);
    }
  }
}

std::vector<Tensor> resize(NodeContext& c, bool upsample) {
  Tensor x = c.input(0);
  const int64_t rank = x.rank();
  ResizeAttrs a;
  a.mode = c.attr_string("mode", "nearest");
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") c.fail("mode {} is not supported", a.mode);
  if (a.mode == "cubic" && (upsample || c.version() < 11)) c.fail("cubic mode needs Resize-11 or later");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::vector<double> roi;
  if (upsample || c.version() < 11) {
    // Upsample and Resize-10: asymmetric coordinates, nearest rounds down.
    a.coordinates = "asymmetric";
    a.nearest = "floor";
    if (upsample && c.version() < 9) {
      scales = c.attr_floats("scales");
    } else {
      scales = c.constant_doubles(1, "scales");
    }
  } else {
    a.coordinates = c.attr_string("coordinate_transformation_mode", "half_pixel");
    a.nearest = c.attr_string("nearest_mode", "round_prefer_floor");
    a.cubic_a = c.attr_float("cubic_coeff_a", -0.75);
    a.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
    a.extrapolation = c.attr_float("extrapolation_value", 0.0);
    if (c.has_input(1)) roi = c.constant_doubles(1, "roi");
    if (c.has_input(2)) scales = c.constant_doubles(2, "scales");
    if (c.has_input(3)) sizes = c.constant_ints(3, "sizes");
  }
  if (!sizes.empty() && !scales.empty()) c.fail("scales and sizes are both given");
  if (sizes.empty() && scales.empty()) c.fail("neither scales nor sizes is given");
  std::vector<double> size_scales;  // the scale of each axis when sizes were given, if not sizes / shape
  if (!upsample && c.version() >= 18) apply_resize18_attributes(c, x.shape(), a.mode, scales, sizes, roi, size_scales);
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != rank) c.fail("scales has {} entries for rank {}", scales.size(), rank);
  if (!sizes.empty() && static_cast<int64_t>(sizes.size()) != rank) c.fail("sizes has {} entries for rank {}", sizes.size(), rank);
  if (a.coordinates == "tf_crop_and_resize" && static_cast<int64_t>(roi.size()) != 2 * rank) {
    c.fail("tf_crop_and_resize needs roi with {} entries, got {}", 2 * rank, roi.size());
  }
  Tensor outside_mask;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const size_t u = static_cast<size_t>(axis);
    const int64_t in = x.shape()[u];
    double scale = 0;
    int64_t out = 0;
    if (!sizes.empty()) {
      out = sizes[u];
      scale = !size_scales.empty() ? size_scales[u] : in == 0 ? 1.0 : static_cast<double>(out) / static_cast<double>(in);
    } else {
      scale = scales[u];
      if (!(scale > 0)) c.fail("scales[{}] is {}, expected a positive number", axis, scale);
      out = static_cast<int64_t>(std::floor(static_cast<double>(in) * scale));
    }
    if (out < 0 || out > (int64_t{1} << 24)) c.fail("output size {} along axis {} is out of range", out, axis);
    const bool crop = a.coordinates == "tf_crop_and_resize";
    if (out == in && scale == 1.0 && !crop) continue;
    if (in == 0) c.fail("axis {} is empty", axis);
    const AxisPlan p = plan_axis(c, a, in, out, scale, crop ? roi[u] : 0.0, crop ? roi[u + rank] : 1.0);
    x = resample_axis(x, axis, p);
    if (crop) {
      std::vector<uint8_t> outside(p.inside.size());
      for (size_t o = 0; o < outside.size(); ++o) outside[o] = p.inside[o] ? 0 : 1;
      Shape mask_shape(static_cast<size_t>(rank), 1);
      mask_shape[u] = out;
      const Tensor m = ops::cast(Tensor::from_vector<uint8_t>(outside, mask_shape), DType::boolean);
      outside_mask = outside_mask.defined() ? ops::logical_or(outside_mask, m) : m;
    }
  }
  if (outside_mask.defined()) x = ops::where(outside_mask, scalar_as(x, a.extrapolation), x);
  return {x};
}

}  // namespace

void add_resize_translations(TranslationTable& t) {
  t.add("Resize", {10, 11, 13, 18}, [](NodeContext& c) { return resize(c, false); });
  t.add("Upsample", {1, 7, 9, 10}, 7, [](NodeContext& c) {
    if (c.version() >= 10) c.fail("Upsample-10 is deprecated; use Resize");
    return resize(c, true);
  });
}

}  // namespace tessera::io::onnx
