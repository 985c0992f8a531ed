// Pooling and resampling over the trailing spatial axes (any leading axes).
// ceil_mode pads the high side further (tessera/core/window.h), so the windows are those of Tessera's
// reference; averages divide by PyTorch's clipped counts there.
//   max_pool:          reduce_window(maximum), padded with -inf.
//   max_pool_grad / _gather: the first maximum of each window (row-major, NaN greatest) found by a
//                      variadic reduce_window over (value, flat index) pairs, then a scatter-add / gather
//                      at that index: exactly Tessera's tie rule, whatever order XLA reduces in.
//   avg_pool(_grad):   reduce_window(add) divided by the window's count; the gradient dilates and pads
//                      the scaled cotangent and sums it back with a stride-1 window.
//   adaptive_avg_pool(_grad), upsample(_grad) (linear): one axis at a time, as a product with an [out, in]
//                      averaging matrix built from iotas, or as gathers of the two neighbours with their
//                      weights; nearest and nearest-exact resampling gather, their gradients scatter-add.
#include <cmath>

#include "tessera/core/window.h"
#include "tessera/io/stablehlo/lower.h"
#include "tessera/ops/resample_coords.h"

namespace tessera::io::stablehlo {

namespace {

struct PoolGeometry {
  int64_t rank = 0;  // spatial axes
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

PoolGeometry geometry(const LowerContext& c) {
  PoolGeometry p;
  p.kernel = c.attrs().get_ints("kernel");
  p.rank = static_cast<int64_t>(p.kernel.size());
  p.stride = c.attrs().get_ints("stride");
  p.padding = c.attrs().get_ints("padding");
  p.dilation = c.attrs().has("dilation") ? c.attrs().get_ints("dilation") : std::vector<int64_t>(p.kernel.size(), 1);
  p.ceil_mode = c.attrs().get_bool_or("ceil_mode", false);
  return p;
}

using Pads = std::vector<std::pair<int64_t, int64_t>>;

// (low, high) padding per spatial axis for an input of spatial shape `in`: ceil mode pads the high side
// further so that plain reduce_window arithmetic yields the partial last window.
Pads input_pads(const PoolGeometry& p, const Shape& in) {
  Pads pads;
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    const int64_t count =
        sliding_window_count(in[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode);
    pads.push_back({p.padding[i],
                    sliding_window_high_padding(in[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], count)});
  }
  return pads;
}

Pads no_pads(const PoolGeometry& p) {
  return Pads(p.kernel.size(), {0, 0});
}

// The window over a value whose last p.rank axes are spatial (the others get a window of 1).
Emitter::Window window(const PoolGeometry& p, int64_t value_rank, const Pads& pads) {
  const size_t lead = static_cast<size_t>(value_rank - p.rank);
  Emitter::Window w;
  w.dims.assign(lead, 1);
  w.strides.assign(lead, 1);
  w.dilations.assign(lead, 1);
  w.padding.assign(lead, {0, 0});
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    w.dims.push_back(p.kernel[i]);
    w.strides.push_back(p.stride[i]);
    w.dilations.push_back(p.dilation[i]);
    w.padding.push_back(pads[i]);
  }
  return w;
}

Shape leading(const Shape& s, int64_t rank) {
  return Shape(s.begin(), s.end() - rank);
}
Shape trailing(const Shape& s, int64_t rank) {
  return Shape(s.end() - rank, s.end());
}

// For x [lead..., *in]: the flat spatial index of each window's first maximum, as [B, Q, 2] index
// tuples (row b, position) over x viewed as [B, P], B = prod(lead), Q = prod(out).
Val argmax_tuples(Emitter& e, const Val& x, const PoolGeometry& p, Shape* out_spatial) {
  const Shape in = trailing(x.shape, p.rank);
  const int64_t b = shape_numel(leading(x.shape, p.rank)), positions = shape_numel(in);
  Shape x3 = {b};
  x3.insert(x3.end(), in.begin(), in.end());
  const Val xv = e.reshape(x, x3);
  const Val index = e.reshape(e.iota("i64", {b, positions}, 1), x3);
  const bool floating = xv.is_float();
  const std::vector<Val> r = e.reduce_window(
      {xv, index}, {e.splat(-HUGE_VAL, xv.elem), e.splat(9.3e18, "i64")}, window(p, xv.rank(), input_pads(p, in)),
      [floating](Emitter& bb, const std::vector<Val>& a) { return pick_extreme_with_index(bb, a, Cmp::GT, floating); });
  *out_spatial = trailing(r[1].shape, p.rank);
  const int64_t q = shape_numel(*out_spatial);
  const Val at = e.reshape(r[1], {b, q, 1});
  return e.concatenate({e.iota("i64", {b, q, 1}, 0), at}, 2);
}

// The averaging divisor of each output window, broadcast to `out_shape`: the taps inside the input, or
// with include_pad the window clipped to the padded input (the kernel size unless ceil mode cuts it).
Val pool_divisor(Emitter& e, const PoolGeometry& p, const Shape& in_spatial, const Shape& out_shape, bool include_pad,
                 const std::string& elem) {
  const Pads pads = input_pads(p, in_spatial);
  Val counts;
  if (include_pad) {
    bool whole = true;
    for (size_t i = 0; i < pads.size(); ++i) whole = whole && pads[i].second == p.padding[i];
    if (whole) {
      int64_t k = 1;
      for (int64_t v : p.kernel) k *= v;
      return e.splat(static_cast<double>(k), elem, out_shape);
    }
    // Ones over the padded input; the extra high padding of ceil mode counts as nothing.
    Shape padded = in_spatial;
    Pads extra;
    for (size_t i = 0; i < pads.size(); ++i) {
      padded[i] += 2 * p.padding[i];
      extra.push_back({0, pads[i].second - p.padding[i]});
    }
    counts = e.reduce_window(e.splat(1.0, elem, padded), e.splat(0.0, elem), window(p, p.rank, extra), "stablehlo.add");
  } else {
    counts =
        e.reduce_window(e.splat(1.0, elem, in_spatial), e.splat(0.0, elem), window(p, p.rank, pads), "stablehlo.add");
  }
  const int64_t lead = static_cast<int64_t>(out_shape.size()) - p.rank;
  return e.broadcast_in_dim(counts, out_shape, iota_axes(p.rank, lead));
}

// [out, in] matrix of adaptive average pooling along one axis: row i averages [floor(i*in/out),
// ceil((i+1)*in/out)).
Val adaptive_matrix(Emitter& e, int64_t in, int64_t out, const std::string& elem) {
  std::vector<int64_t> begin, end;
  std::vector<double> weight;
  for (int64_t i = 0; i < out; ++i) {
    begin.push_back(i * in / out);
    end.push_back(((i + 1) * in + out - 1) / out);
    weight.push_back(1.0 / static_cast<double>(end.back() - begin.back()));
  }
  const Shape shape = {out, in};
  const Val j = e.iota("i64", shape, 1);
  const Val lo = e.broadcast_in_dim(e.constant(Array::from_vector(begin, {out})), shape, {0});
  const Val hi = e.broadcast_in_dim(e.constant(Array::from_vector(end, {out})), shape, {0});
  const Val w = e.broadcast_in_dim(e.convert(e.constant(Array::from_vector(weight, {out})), elem), shape, {0});
  const Val inside = e.logical_and(e.compare(Cmp::GE, j, lo), e.compare(Cmp::LT, j, hi));
  return e.select(inside, w, e.splat(0.0, elem, shape));
}

// y with axis `axis` contracted against dimension `dim` of matrix m (the other dimension takes the
// axis's place). Always at HIGHEST precision: the weights are exact and TF32 would blur them.
Val along_axis(Emitter& e, const Val& y, const Val& m, int64_t axis, int64_t dim) {
  const Val prod = e.dot_general(y, m, {}, {}, {axis}, {dim}, true);
  std::vector<int64_t> perm = iota_axes(axis);
  perm.push_back(prod.rank() - 1);
  for (int64_t d = axis; d < prod.rank() - 1; ++d) perm.push_back(d);
  return e.transpose(prod, perm);
}

// Per output position along one axis: the source index (nearest modes) or the two neighbours and their
// weights (linear), from the same coordinate maps as Tessera's reference (ops/resample_coords.h).
struct AxisTaps {
  std::vector<int64_t> lo, hi;
  std::vector<double> w_lo, w_hi;
};

AxisTaps resample_taps(const ops::resample::Axis& axis, ops::resample::Mode mode, bool align_corners) {
  AxisTaps t;
  for (int64_t i = 0; i < axis.out; ++i) {
    if (mode != ops::resample::Mode::linear) {
      t.lo.push_back(ops::resample::nearest_source(axis, i, mode == ops::resample::Mode::nearest_exact));
      continue;
    }
    const ops::resample::LinearTap tap = ops::resample::linear_source(axis, i, align_corners);
    t.lo.push_back(tap.lo);
    t.hi.push_back(tap.hi);
    t.w_lo.push_back(1.0 - tap.frac);
    t.w_hi.push_back(tap.frac);
  }
  return t;
}

Val index_const(Emitter& e, const std::vector<int64_t>& v) {
  return e.constant(Array::from_vector(v, {static_cast<int64_t>(v.size())}));
}

// Weights along `axis` of a value of `shape`.
Val axis_weights(Emitter& e, const std::vector<double>& w, const Shape& shape, int64_t axis, const std::string& elem) {
  const Val c = e.convert(e.constant(Array::from_vector(w, {static_cast<int64_t>(w.size())})), elem);
  return e.broadcast_in_dim(c, shape, {axis});
}

struct ResampleAttrs {
  ops::resample::Mode mode;
  bool nearest, align_corners;
  int64_t rank;
  std::vector<double> scales;  // empty: ratios from the sizes
};

ResampleAttrs resample_attrs(const LowerContext& c, const std::string& size_attr) {
  ResampleAttrs r;
  r.mode = ops::resample::Mode::nearest;
  ops::resample::parse_mode(c.attrs().get_string("mode"), &r.mode);
  r.nearest = r.mode != ops::resample::Mode::linear;
  r.align_corners = c.attrs().get_bool("align_corners");
  r.rank = static_cast<int64_t>(c.attrs().get_ints(size_attr).size());
  if (c.attrs().has("scales")) r.scales = c.attrs().get_floats("scales");
  return r;
}

ops::resample::Axis resample_axis(const ResampleAttrs& r, int64_t d, int64_t in, int64_t out) {
  return {in, out, r.scales.empty() ? 0.0 : r.scales[static_cast<size_t>(d)]};
}

}  // namespace

void add_pool_lowerings(LoweringTable& t) {
  t.add("max_pool", [](LowerContext& c) -> std::vector<Val> {
    const PoolGeometry p = geometry(c);
    const Val& x = c.in[0];
    return {c.e.reduce_window(x, c.e.splat(-HUGE_VAL, x.elem),
                              window(p, x.rank(), input_pads(p, trailing(x.shape, p.rank))), "stablehlo.maximum")};
  });
  t.add("max_pool_gather", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const PoolGeometry p = geometry(c);
    const Val &x = c.in[0], &v = c.in[1];
    Shape out_spatial;
    const Val tuples = argmax_tuples(e, x, p, &out_spatial);
    const int64_t b = tuples.shape[0];
    const Val picked = e.gather_elements(e.reshape(v, {b, shape_numel(trailing(v.shape, p.rank))}), tuples);
    return {e.reshape(picked, c.out_shape())};
  });
  t.add("max_pool_grad", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const PoolGeometry p = geometry(c);
    const Val &x = c.in[0], &g = c.in[1];
    Shape out_spatial;
    const Val tuples = argmax_tuples(e, x, p, &out_spatial);
    const int64_t b = tuples.shape[0], q = tuples.shape[1];
    const std::string acc = widened(g.elem);
    const Val zeros = e.splat(0.0, acc, {b, shape_numel(trailing(x.shape, p.rank))});
    const Val sum = e.scatter_add_elements(zeros, tuples, e.reshape(e.convert(g, acc), {b, q}));
    return {e.convert(e.reshape(sum, x.shape), c.out_elem())};
  });
  t.add("avg_pool", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const PoolGeometry p = geometry(c);
    const std::string acc = widened(c.in[0].elem);
    const Val x = e.convert(c.in[0], acc);
    const Val sum = e.reduce_window(x, e.splat(0.0, acc), window(p, x.rank(), input_pads(p, trailing(x.shape, p.rank))),
                                    "stablehlo.add");
    const Val div =
        pool_divisor(e, p, trailing(x.shape, p.rank), sum.shape, c.attrs().get_bool("count_include_pad"), acc);
    return {e.convert(e.div(sum, div), c.out_elem())};
  });
  t.add("avg_pool_grad", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const PoolGeometry p = geometry(c);
    const std::vector<int64_t>& in_size = c.attrs().get_ints("input_size");
    const std::string acc = widened(c.in[0].elem);
    const Val g = e.convert(c.in[0], acc);
    const Val scaled = e.div(g, pool_divisor(e, p, in_size, g.shape, c.attrs().get_bool("count_include_pad"), acc));
    const int64_t lead = g.rank() - p.rank;
    std::vector<int64_t> low(static_cast<size_t>(g.rank()), 0), high = low, interior = low;
    for (int64_t d = 0; d < p.rank; ++d) {
      const size_t i = static_cast<size_t>(d), ax = static_cast<size_t>(lead + d);
      low[ax] = p.kernel[i] - 1 - p.padding[i];
      high[ax] = in_size[i] + p.padding[i] - 1 - (g.shape[ax] - 1) * p.stride[i];
      interior[ax] = p.stride[i] - 1;
    }
    const Val gp = e.pad(scaled, e.splat(0.0, acc), low, high, interior);
    PoolGeometry unit = p;
    unit.stride.assign(p.kernel.size(), 1);
    return {e.convert(e.reduce_window(gp, e.splat(0.0, acc), window(unit, gp.rank(), no_pads(unit)), "stablehlo.add"),
                      c.out_elem())};
  });
  t.add("adaptive_avg_pool", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const std::vector<int64_t>& out = c.attrs().get_ints("output_size");
    const int64_t rank = static_cast<int64_t>(out.size());
    const std::string acc = widened(c.in[0].elem);
    Val y = e.convert(c.in[0], acc);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t axis = y.rank() - rank + d;
      y = along_axis(e, y, adaptive_matrix(e, y.shape[static_cast<size_t>(axis)], out[static_cast<size_t>(d)], acc),
                     axis, 1);
    }
    return {e.convert(y, c.out_elem())};
  });
  t.add("adaptive_avg_pool_grad", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const std::vector<int64_t>& in = c.attrs().get_ints("input_size");
    const int64_t rank = static_cast<int64_t>(in.size());
    const std::string acc = widened(c.in[0].elem);
    Val y = e.convert(c.in[0], acc);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t axis = y.rank() - rank + d;
      y = along_axis(e, y, adaptive_matrix(e, in[static_cast<size_t>(d)], y.shape[static_cast<size_t>(axis)], acc),
                     axis, 0);
    }
    return {e.convert(y, c.out_elem())};
  });
  t.add("upsample", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const ResampleAttrs r = resample_attrs(c, "size");
    const std::vector<int64_t>& size = c.attrs().get_ints("size");
    const std::string acc = r.nearest ? c.in[0].elem : widened(c.in[0].elem);
    Val y = e.convert(c.in[0], acc);
    for (int64_t d = 0; d < r.rank; ++d) {
      const int64_t axis = y.rank() - r.rank + d;
      const AxisTaps taps =
          resample_taps(resample_axis(r, d, y.shape[static_cast<size_t>(axis)], size[static_cast<size_t>(d)]), r.mode,
                        r.align_corners);
      if (r.nearest) {
        y = e.take_along(y, index_const(e, taps.lo), axis);
        continue;
      }
      const Val lo = e.take_along(y, index_const(e, taps.lo), axis);
      const Val hi = e.take_along(y, index_const(e, taps.hi), axis);
      y = e.add(e.mul(lo, axis_weights(e, taps.w_lo, lo.shape, axis, acc)),
                e.mul(hi, axis_weights(e, taps.w_hi, hi.shape, axis, acc)));
    }
    return {e.convert(y, c.out_elem())};
  });
  t.add("upsample_grad", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const ResampleAttrs r = resample_attrs(c, "input_size");
    const std::vector<int64_t>& in = c.attrs().get_ints("input_size");
    const std::string acc = widened(c.in[0].elem);
    Val g = e.convert(c.in[0], acc);
    for (int64_t d = 0; d < r.rank; ++d) {
      const int64_t axis = g.rank() - r.rank + d;
      const AxisTaps taps = resample_taps(
          resample_axis(r, d, in[static_cast<size_t>(d)], g.shape[static_cast<size_t>(axis)]), r.mode, r.align_corners);
      Shape shape = g.shape;
      shape[static_cast<size_t>(axis)] = in[static_cast<size_t>(d)];
      Val dx = e.add_along(e.splat(0.0, acc, shape), index_const(e, taps.lo),
                           r.nearest ? g : e.mul(g, axis_weights(e, taps.w_lo, g.shape, axis, acc)), axis);
      if (!r.nearest)
        dx = e.add_along(dx, index_const(e, taps.hi), e.mul(g, axis_weights(e, taps.w_hi, g.shape, axis, acc)), axis);
      g = dx;
    }
    return {e.convert(g, c.out_elem())};
  });
}

}  // namespace tessera::io::stablehlo
