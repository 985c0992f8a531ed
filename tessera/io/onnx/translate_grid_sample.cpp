// GridSample-16 (4-D input; bilinear, nearest or bicubic; zeros, border or reflection padding) from
// gathers: the grid's normalised coordinates become pixel coordinates in the graph, each tap is a
// take_along_axis over the flattened image, and taps outside the image read zero (zeros), the clamped
// edge (border) or the pixel mirrored at the image's edges (reflection), as ONNX's reference does.
#include <array>
#include <utility>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/index.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

enum class Padding { Zeros, Border, Reflection };

struct Image {
  Tensor flat;  // [N, C, H * W]
  int64_t n, channels, h, w;
  bool align = false;
};

// Mirrors v into [lo, hi] as often as needed (ONNX's reference: an even number of folds lands at
// lo + r below the range and hi - r above it, an odd number the other way round).
Tensor reflect(const Tensor& v, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return ops::full_like(v, lo);
  const Tensor below = ops::lt(v, scalar_as(v, lo)), above = ops::gt(v, scalar_as(v, hi));
  const Tensor distance = ops::where(below, lo - v, ops::where(above, v - hi, scalar_as(v, 0.0)));
  const Tensor folds = ops::floor(distance / range);
  const Tensor rest = distance - folds * range;
  const Tensor even = ops::eq(folds - ops::floor(folds * 0.5) * 2.0, scalar_as(v, 0.0));
  const Tensor from_lo = lo + rest, from_hi = hi - rest;
  return ops::where(below, ops::where(even, from_lo, from_hi), ops::where(above, ops::where(even, from_hi, from_lo), v));
}

// The range reflection mirrors pixel coordinates in: the corner pixels' centres with align_corners,
// otherwise their outer edges.
std::pair<double, double> reflection_range(const Image& img, int64_t size) {
  const double s = static_cast<double>(size);
  return img.align ? std::pair{0.0, s - 1} : std::pair{-0.5, s - 0.5};
}

// x [N, Ho * Wo] and y in pixels, rounded down already for the tap; the tap's values [N, C, Ho * Wo],
// zero where it falls outside the image unless the padding clamps or mirrors it inside.
Tensor tap(const Image& img, Tensor x, Tensor y, Padding padding) {
  if (padding == Padding::Reflection) {
    const auto [x_lo, x_hi] = reflection_range(img, img.w);
    const auto [y_lo, y_hi] = reflection_range(img, img.h);
    x = ops::floor(reflect(x, x_lo, x_hi));  // non-negative after the clamp below: floor truncates
    y = ops::floor(reflect(y, y_lo, y_hi));
  }
  const Tensor w1 = scalar_as(x, static_cast<double>(img.w - 1)), h1 = scalar_as(y, static_cast<double>(img.h - 1));
  const Tensor zero = scalar_as(x, 0.0);
  const Tensor inside = ops::logical_and(ops::logical_and(ops::ge(x, zero), ops::le(x, w1)),
                                         ops::logical_and(ops::ge(y, zero), ops::le(y, h1)));
  const Tensor cx = ops::minimum(ops::maximum(x, zero), w1), cy = ops::minimum(ops::maximum(y, zero), h1);
  const Tensor index = ops::cast(cy * static_cast<double>(img.w) + cx, DType::i64);
  const int64_t points = x.dim(1);
  const Tensor spread = ops::broadcast_to(ops::unsqueeze(index, 1), {img.n, img.channels, points});
  const Tensor values = ops::take_along_axis(img.flat, spread, 2);
  if (padding != Padding::Zeros) return values;
  return ops::where(ops::unsqueeze(inside, 1), values, scalar_as(values, 0.0));
}

// Weights of the taps at distances t + 1, t, 1 - t and 2 - t from the point (t in [0, 1)): Keys'
// cubic convolution kernel with a = -0.75, as ONNX's reference and PyTorch use.
std::array<Tensor, 4> cubic_weights(const Tensor& t) {
  constexpr double a = -0.75;
  auto outer = [&](const Tensor& d) { return ((d * a - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 <= d < 2
  auto inner = [&](const Tensor& d) { return ((d * (a + 2)) - (a + 3)) * d * d + 1.0; };    // d < 1
  const Tensor u = 1.0 - t;
  return {outer(t + 1.0), inner(t), inner(u), outer(u + 1.0)};
}

std::vector<Tensor> grid_sample(NodeContext& c) {
  const Tensor x = c.input(0), grid = c.input(1);
  require_floating(c, x);
  if (x.rank() != 4 || grid.rank() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0)) {
    c.fail("expected X [N, C, H, W] and grid [N, Ho, Wo, 2]");
  }
  const bool align = c.attr_int("align_corners", 0) != 0;
  const std::string mode = c.attr_string("mode", "bilinear"), padding = c.attr_string("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    c.fail("mode {} is not supported (bilinear, nearest and bicubic are)", mode);
  }
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    c.fail("padding_mode {} is not supported (zeros, border and reflection are)", padding);
  }
  const Padding pad = padding == "zeros" ? Padding::Zeros : padding == "border" ? Padding::Border : Padding::Reflection;
  const Image img{ops::reshape(x, {x.dim(0), x.dim(1), x.dim(2) * x.dim(3)}), x.dim(0), x.dim(1), x.dim(2), x.dim(3),
                  align};
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  const Tensor g = ops::cast(ops::reshape(grid, {img.n, ho * wo, 2}), x.dtype());
  const Tensor gx = ops::squeeze(ops::slice(g, 2, 0, 1), {2}), gy = ops::squeeze(ops::slice(g, 2, 1, 2), {2});
  // align_corners maps -1 and 1 to the centres of the corner pixels, otherwise to their outer edges.
  auto to_pixels = [&](const Tensor& v, int64_t size) {
    const double s = static_cast<double>(size);
    return align ? (v + 1.0) * ((s - 1) / 2) : ((v + 1.0) * s - 1.0) * 0.5;
  };
  Tensor px = to_pixels(gx, img.w), py = to_pixels(gy, img.h);
  if (mode == "nearest") {
    px = ops::round(px);
    py = ops::round(py);
  }
  if (pad == Padding::Border) {
    px = ops::clamp(px, 0.0, static_cast<double>(img.w - 1));
    py = ops::clamp(py, 0.0, static_cast<double>(img.h - 1));
  } else if (pad == Padding::Reflection) {
    const auto [x_lo, x_hi] = reflection_range(img, img.w);
    const auto [y_lo, y_hi] = reflection_range(img, img.h);
    px = reflect(px, x_lo, x_hi);
    py = reflect(py, y_lo, y_hi);
  }
  auto weight = [](const Tensor& w) { return ops::unsqueeze(w, 1); };
  Tensor y;
  if (mode == "nearest") {
    y = tap(img, px, py, pad);
  } else if (mode == "bicubic") {
    // 4 x 4 taps from floor - 1 to floor + 2, weighted by the cubic convolution kernel (a = -0.75).
    const Tensor x0 = ops::floor(px), y0 = ops::floor(py);
    const std::array<Tensor, 4> wx = cubic_weights(px - x0), wy = cubic_weights(py - y0);
    for (int i = 0; i < 4; ++i) {
      Tensor row;
      for (int j = 0; j < 4; ++j) {
        const Tensor v = tap(img, x0 + static_cast<double>(j - 1), y0 + static_cast<double>(i - 1), pad) * weight(wx[j]);
        row = j == 0 ? v : row + v;
      }
      y = i == 0 ? row * weight(wy[i]) : y + row * weight(wy[i]);
    }
  } else {
    const Tensor x0 = ops::floor(px), y0 = ops::floor(py);
    const Tensor fx = px - x0, fy = py - y0;
    const Tensor x1 = x0 + 1.0, y1 = y0 + 1.0;
    y = tap(img, x0, y0, pad) * weight((1.0 - fx) * (1.0 - fy)) + tap(img, x1, y0, pad) * weight(fx * (1.0 - fy)) +
        tap(img, x0, y1, pad) * weight((1.0 - fx) * fy) + tap(img, x1, y1, pad) * weight(fx * fy);
  }
  return {ops::reshape(y, {img.n, img.channels, ho, wo})};
}

}  // namespace

void add_grid_sample_translations(TranslationTable& t) { t.add("GridSample", {16}, grid_sample); }

}  // namespace tessera::io::onnx
