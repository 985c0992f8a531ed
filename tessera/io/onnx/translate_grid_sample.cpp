// GridSample-16 (4-D input, bilinear or nearest, zeros or border padding) from gathers: the grid's
// normalised coordinates become pixel coordinates in the graph, each tap is a take_along_axis over
// the flattened image, and taps outside the image read zero (zeros) or the clamped edge (border).
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/index.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

struct Image {
  Tensor flat;  // [N, C, H * W]
  int64_t n, channels, h, w;
};

// x [N, Ho * Wo] and y in pixels, rounded down already for the tap; the tap's values [N, C, Ho * Wo],
// zero where it falls outside the image unless `border` clamps it inside.
Tensor tap(const Image& img, const Tensor& x, const Tensor& y, bool border) {
  const Tensor w1 = scalar_as(x, static_cast<double>(img.w - 1)), h1 = scalar_as(y, static_cast<double>(img.h - 1));
  const Tensor zero = scalar_as(x, 0.0);
  const Tensor inside = ops::logical_and(ops::logical_and(ops::ge(x, zero), ops::le(x, w1)),
                                         ops::logical_and(ops::ge(y, zero), ops::le(y, h1)));
  const Tensor cx = ops::minimum(ops::maximum(x, zero), w1), cy = ops::minimum(ops::maximum(y, zero), h1);
  const Tensor index = ops::cast(cy * static_cast<double>(img.w) + cx, DType::i64);
  const int64_t points = x.dim(1);
  const Tensor spread = ops::broadcast_to(ops::unsqueeze(index, 1), {img.n, img.channels, points});
  const Tensor values = ops::take_along_axis(img.flat, spread, 2);
  if (border) return values;
  return ops::where(ops::unsqueeze(inside, 1), values, scalar_as(values, 0.0));
}

std::vector<Tensor> grid_sample(NodeContext& c) {
  const Tensor x = c.input(0), grid = c.input(1);
  require_floating(c, x);
  if (x.rank() != 4 || grid.rank() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0)) {
    c.fail("expected X [N, C, H, W] and grid [N, Ho, Wo, 2]");
  }
  const bool align = c.attr_int("align_corners", 0) != 0;
  const std::string mode = c.attr_string("mode", "bilinear"), padding = c.attr_string("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest") c.fail("mode {} is not supported (bilinear and nearest are)", mode);
  if (padding != "zeros" && padding != "border") c.fail("padding_mode {} is not supported (zeros and border are)", padding);
  const bool border = padding == "border";
  const Image img{ops::reshape(x, {x.dim(0), x.dim(1), x.dim(2) * x.dim(3)}), x.dim(0), x.dim(1), x.dim(2), x.dim(3)};
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  const Tensor g = ops::cast(ops::reshape(grid, {img.n, ho * wo, 2}), x.dtype());
  const Tensor gx = ops::squeeze(ops::slice(g, 2, 0, 1), {2}), gy = ops::squeeze(ops::slice(g, 2, 1, 2), {2});
  // align_corners maps -1 and 1 to the centres of the corner pixels, otherwise to their outer edges.
  auto to_pixels = [&](const Tensor& v, int64_t size) {
    const double s = static_cast<double>(size);
    return align ? (v + 1.0) * ((s - 1) / 2) : ((v + 1.0) * s - 1.0) * 0.5;
  };
  Tensor px = to_pixels(gx, img.w), py = to_pixels(gy, img.h);
  if (border) {
    px = ops::clamp(px, 0.0, static_cast<double>(img.w - 1));
    py = ops::clamp(py, 0.0, static_cast<double>(img.h - 1));
  }
  Tensor y;
  if (mode == "nearest") {
    y = tap(img, ops::round(px), ops::round(py), border);
  } else {
    const Tensor x0 = ops::floor(px), y0 = ops::floor(py);
    const Tensor fx = px - x0, fy = py - y0;
    const Tensor x1 = x0 + 1.0, y1 = y0 + 1.0;
    auto weight = [](const Tensor& w) { return ops::unsqueeze(w, 1); };
    y = tap(img, x0, y0, border) * weight((1.0 - fx) * (1.0 - fy)) + tap(img, x1, y0, border) * weight(fx * (1.0 - fy)) +
        tap(img, x0, y1, border) * weight((1.0 - fx) * fy) + tap(img, x1, y1, border) * weight(fx * fy);
  }
  return {ops::reshape(y, {img.n, img.channels, ho, wo})};
}

}  // namespace

void add_grid_sample_translations(TranslationTable& t) { t.add("GridSample", {16}, grid_sample); }

}  // namespace tessera::io::onnx
