// Shape ops: reshape, permute (transpose), broadcast_to (broadcast_in_dim), slices with Python
// semantics (negative steps reverse first), slice_backward (an interior pad), concat, split, flip
// (reverse) and pad (constant: stablehlo.pad; reflect: mirrored slices concatenated).
#include "tessera/io/stablehlo/lower.h"
#include "tessera/ops/shape_util.h"

namespace tessera::io::stablehlo {

namespace {

int64_t axis_attr(const LowerContext& c, const Val& x) {
  return normalize_axis(c.attrs().get_int("axis"), x.rank(), c.node.op_name().c_str());
}

// The elements start, start + step, ... (count of them) along `axis`, for any non-zero step.
Val strided_slice(Emitter& e, const Val& x, int64_t axis, const ops::SliceRange& r) {
  const int64_t n = x.shape[static_cast<size_t>(axis)];
  if (r.count == 0) return e.slice_axis(x, axis, 0, 0);
  if (r.step > 0) return e.slice_axis(x, axis, r.start, r.start + (r.count - 1) * r.step + 1, r.step);
  // Reversed, element i of the view is x[n - 1 - i]: the slice starts at n - 1 - start.
  const Val flipped = e.reverse(x, {axis});
  const int64_t from = n - 1 - r.start;
  return e.slice_axis(flipped, axis, from, from + (r.count - 1) * (-r.step) + 1, -r.step);
}

std::vector<int64_t> zeros(int64_t n) {
  return std::vector<int64_t>(static_cast<size_t>(n), 0);
}

}  // namespace

void add_shape_lowerings(LoweringTable& t) {
  t.add("reshape", [](LowerContext& c) -> std::vector<Val> { return {c.e.reshape(c.in[0], c.out_shape())}; });
  t.add("permute",
        [](LowerContext& c) -> std::vector<Val> { return {c.e.transpose(c.in[0], c.attrs().get_ints("axes"))}; });
  t.add("broadcast_to", [](LowerContext& c) -> std::vector<Val> { return {c.e.broadcast_to(c.in[0], c.out_shape())}; });
  t.add("slice", [](LowerContext& c) -> std::vector<Val> {
    const Val& x = c.in[0];
    const int64_t axis = axis_attr(c, x);
    const ops::SliceRange r = ops::resolve_slice(x.shape[static_cast<size_t>(axis)], c.attrs().get_int("start"),
                                                 c.attrs().get_int("stop"), c.attrs().get_int("step"));
    return {strided_slice(c.e, x, axis, r)};
  });
  // Zeros of `size` along the axis with g's elements at start, start + step, ...: an edge and
  // interior pad of g (reversed first for a negative step, so that it runs upward).
  t.add("slice_backward", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Val& g = c.in[0];
    const int64_t axis = axis_attr(c, g);
    const int64_t start = c.attrs().get_int("start"), size = c.attrs().get_int("size");
    const int64_t count = g.shape[static_cast<size_t>(axis)];
    if (count == 0) return {e.splat(0.0, g.elem, c.out_shape())};
    const int64_t step = count > 1 ? c.attrs().get_int("step") : 1;
    const int64_t first = step > 0 ? start : start + (count - 1) * step;  // the lowest position written
    const int64_t span = (count - 1) * std::abs(step) + 1;
    std::vector<int64_t> low = zeros(g.rank()), high = zeros(g.rank()), interior = zeros(g.rank());
    low[static_cast<size_t>(axis)] = first;
    high[static_cast<size_t>(axis)] = size - first - span;
    interior[static_cast<size_t>(axis)] = std::abs(step) - 1;
    const Val src = step > 0 ? g : e.reverse(g, {axis});
    return {e.pad(src, e.splat(0.0, g.elem), low, high, interior)};
  });
  t.add("concat", [](LowerContext& c) -> std::vector<Val> {
    std::vector<Val> parts;
    for (const Val& v : c.in) parts.push_back(c.e.convert(v, c.out_elem()));
    return {c.e.concatenate(parts, axis_attr(c, c.in[0]))};
  });
  t.add("split", [](LowerContext& c) -> std::vector<Val> {
    const Val& x = c.in[0];
    const int64_t axis = axis_attr(c, x);
    std::vector<Val> pieces;
    int64_t pos = 0;
    for (int64_t s : c.attrs().get_ints("sizes")) {
      pieces.push_back(c.e.slice_axis(x, axis, pos, pos + s));
      pos += s;
    }
    return pieces;
  });
  t.add("flip", [](LowerContext& c) -> std::vector<Val> {
    std::vector<int64_t> dims;
    for (int64_t a : c.attrs().get_ints("axes")) dims.push_back(normalize_axis(a, c.in[0].rank(), "flip"));
    std::sort(dims.begin(), dims.end());
    return {c.e.reverse(c.in[0], dims)};
  });
  t.add("pad", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    Val x = c.in[0];
    const std::vector<int64_t>& flat = c.attrs().get_ints("widths");
    const size_t pairs = flat.size() / 2;
    if (c.attrs().get_string("mode") == "constant") {
      std::vector<int64_t> low = zeros(x.rank()), high = zeros(x.rank());
      for (size_t d = 0; d < pairs; ++d) {
        low[d] = flat[2 * d];
        high[d] = flat[2 * d + 1];
      }
      return {e.pad(x, e.splat(c.attrs().get_float("value"), x.elem), low, high, zeros(x.rank()))};
    }
    // Reflect without repeating the edge, one axis at a time: [mirror of x[1 : before+1], x,
    // mirror of x[n-1-after : n-1]].
    for (size_t d = 0; d < pairs; ++d) {
      const int64_t before = flat[2 * d], after = flat[2 * d + 1];
      const int64_t axis = static_cast<int64_t>(d), n = x.shape[d];
      std::vector<Val> parts;
      if (before > 0) parts.push_back(e.reverse(e.slice_axis(x, axis, 1, before + 1), {axis}));
      parts.push_back(x);
      if (after > 0) parts.push_back(e.reverse(e.slice_axis(x, axis, n - 1 - after, n - 1), {axis}));
      x = e.concatenate(parts, axis);
    }
    return {x};
  });
}

}  // namespace tessera::io::stablehlo
