// Shape ops: reshape, permute (Transpose), broadcast_to (Expand), slices with Python semantics (ONNX
// Slice with steps; a negative step ends below 0 as INT64_MIN, since -1 would mean the last element),
// slice_backward (Pad, interleaving zeros for steps beyond 1), concat, split, flip and pad (constant
// or reflect, which ONNX's Pad has as they are).
#include <limits>

#include "tessera/core/slice_range.h"
#include "tessera/io/onnx/export_lower.h"

namespace tessera::io::onnx {

namespace {

constexpr int64_t kBelowZero = std::numeric_limits<int64_t>::min();

int64_t axis_attr(const LowerContext& c, const OVal& x) {
  return normalize_axis(c.attrs().get_int("axis"), x.rank(), c.node.op_name().c_str());
}

Shape with_dim(Shape s, int64_t axis, int64_t size) {
  s[static_cast<size_t>(axis)] = size;
  return s;
}

// x[start : end : step] along one axis (ONNX's bounds), of `count` elements.
OVal slice_axis(GraphBuilder& b, const OVal& x, int64_t axis, int64_t start, int64_t end, int64_t step, int64_t count) {
  return b.op("Slice", {x, b.i64s({start}), b.i64s({end}), b.i64s({axis}), b.i64s({step})}, x.dtype,
              with_dim(x.shape, axis, count));
}

// Zero padding of x along one axis.
OVal pad_axis(GraphBuilder& b, const OVal& x, int64_t axis, int64_t low, int64_t high) {
  if (low == 0 && high == 0) return x;
  std::vector<int64_t> pads(2 * x.shape.size(), 0);
  pads[static_cast<size_t>(axis)] = low;
  pads[x.shape.size() + static_cast<size_t>(axis)] = high;
  const int64_t n = x.shape[static_cast<size_t>(axis)] + low + high;
  return b.op("Pad", {x, b.i64s(pads)}, x.dtype, with_dim(x.shape, axis, n));
}

OVal reversed(GraphBuilder& b, const OVal& x, int64_t axis) {
  const int64_t n = x.shape[static_cast<size_t>(axis)];
  return slice_axis(b, x, axis, -1, kBelowZero, -1, n);
}

}  // namespace

void add_shape_exports(LoweringTable& t) {
  t.add("reshape", [](LowerContext& c) -> std::vector<OVal> {
    const OVal r = c.b.reshape(c.in[0], c.out_shape());
    return {r.name == c.in[0].name ? c.op("Identity", {r}) : r};
  });
  t.add("permute", [](LowerContext& c) -> std::vector<OVal> {
    std::vector<int64_t> perm;  // in order: normalize_axes would sort them
    for (int64_t a : c.attrs().get_ints("axes")) perm.push_back(normalize_axis(a, c.in[0].rank(), "permute"));
    return {c.op("Transpose", {c.in[0]}, [perm](pb::NodeProto& n) { attr_ints(n, "perm", perm); })};
  });
  t.add("broadcast_to", [](LowerContext& c) -> std::vector<OVal> { return {c.op("Expand", {c.in[0], c.b.i64s(c.out_shape())})}; });
  t.add("slice", [](LowerContext& c) -> std::vector<OVal> {
    const OVal& x = c.in[0];
    const int64_t axis = axis_attr(c, x);
    const SliceRange r = resolve_slice(x.shape[static_cast<size_t>(axis)], c.attrs().get_int("start"),
                                       c.attrs().get_int("stop"), c.attrs().get_int("step"));
    if (r.count == 0) return {c.op("Slice", {x, c.b.i64s({0}), c.b.i64s({0}), c.b.i64s({axis}), c.b.i64s({1})})};
    int64_t end = r.start + (r.count - 1) * r.step + (r.step > 0 ? 1 : -1);
    if (end < 0) end = kBelowZero;
    return {slice_axis(c.b, x, axis, r.start, end, r.step, r.count)};
  });
  // Zeros of `size` along the axis with g's elements at start, start + step, ...: each element is
  // followed by |step| - 1 zeros (unsqueeze, pad, reshape), the tail is cut, and the edges padded.
  t.add("slice_backward", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    OVal g = c.in[0];
    const int64_t axis = axis_attr(c, g);
    const int64_t start = c.attrs().get_int("start"), size = c.attrs().get_int("size");
    const int64_t count = g.shape[static_cast<size_t>(axis)];
    if (count == 0) return {b.constant(Array::full(c.out_dtype(), c.out_shape(), 0), "zeros")};
    const int64_t step = count > 1 ? c.attrs().get_int("step") : 1;
    const int64_t stride = std::abs(step);
    const int64_t first = step > 0 ? start : start + (count - 1) * step;  // the lowest position written
    const int64_t span = (count - 1) * stride + 1;
    if (step < 0) g = reversed(b, g, axis);
    if (stride > 1) {
      Shape split = g.shape;
      split.insert(split.begin() + axis + 1, 1);
      OVal u = pad_axis(b, b.reshape(g, split), axis + 1, 0, stride - 1);
      g = b.reshape(u, with_dim(g.shape, axis, count * stride));
      g = slice_axis(b, g, axis, 0, span, 1, span);
    }
    return {pad_axis(b, g, axis, first, size - first - span)};
  });
  t.add("concat", [](LowerContext& c) -> std::vector<OVal> {
    std::vector<OVal> parts;
    for (const OVal& v : c.in) parts.push_back(c.b.cast(v, c.out_dtype()));
    const int64_t axis = axis_attr(c, c.in[0]);
    return {c.op("Concat", parts, [axis](pb::NodeProto& n) { attr_int(n, "axis", axis); })};
  });
  t.add("split", [](LowerContext& c) -> std::vector<OVal> {
    const OVal& x = c.in[0];
    const int64_t axis = axis_attr(c, x);
    const std::vector<int64_t>& sizes = c.attrs().get_ints("sizes");
    std::vector<std::pair<DType, Shape>> outs;
    for (int64_t s : sizes) outs.push_back({x.dtype, with_dim(x.shape, axis, s)});
    return c.b.op_multi("Split", {x, c.b.i64s(sizes)}, outs, [axis](pb::NodeProto& n) { attr_int(n, "axis", axis); });
  });
  t.add("flip", [](LowerContext& c) -> std::vector<OVal> {
    OVal x = c.in[0];
    for (int64_t a : c.attrs().get_ints("axes")) x = reversed(c.b, x, normalize_axis(a, x.rank(), "flip"));
    return {x.name == c.in[0].name ? c.op("Identity", {x}) : x};
  });
  t.add("pad", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const OVal& x = c.in[0];
    const std::vector<int64_t>& flat = c.attrs().get_ints("widths");
    const size_t rank = x.shape.size(), pairs = flat.size() / 2;
    std::vector<int64_t> pads(2 * rank, 0);
    for (size_t d = 0; d < pairs; ++d) {
      pads[d] = flat[2 * d];
      pads[rank + d] = flat[2 * d + 1];
    }
    const std::string mode = c.attrs().get_string("mode");
    if (mode == "constant") {
      return {c.op("Pad", {x, b.i64s(pads), b.scalar(c.attrs().get_float("value"), x.dtype)})};
    }
    return {c.op("Pad", {x, b.i64s(pads)}, [mode](pb::NodeProto& n) { attr_string(n, "mode", mode); })};
  });
}

}  // namespace tessera::io::onnx
