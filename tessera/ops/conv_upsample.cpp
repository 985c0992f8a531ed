// Resampling of the trailing spatial axes (as many as the `size` attribute has entries) with PyTorch's
// conventions (the coordinate maps are in resample_coords.h, shared with the StableHLO export):
//   nearest:        src = floor(dst * in / out), computed exactly in integers (PyTorch's 'nearest')
//   nearest-exact:  src = floor((dst + 0.5) * in / out), likewise (PyTorch's 'nearest-exact')
//   linear:         separable (bi/tri)linear interpolation; align_corners maps corner pixel centres onto
//                   each other (src = dst * (in - 1) / (out - 1)), otherwise src = (dst + 0.5) * in / out
//                   - 0.5, clamped at 0, with the upper neighbour clamped to the last pixel.
// The optional `scales` attribute holds the scale factors a user gave (PyTorch's scale_factor): the ratio
// is then 1 / scale instead of in / out, as PyTorch computes it.
// upsample is linear in its input; upsample_grad is its transpose, and each one's VJP is the other.
#include <algorithm>
#include <cmath>

#include "tessera/ir/op_def.h"
#include "tessera/ops/conv.h"
#include "tessera/ops/conv_decompose.h"
#include "tessera/ops/conv_util.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/resample_coords.h"

namespace tessera::ops::conv_detail {

namespace {
using ir::Value;
using ir::VjpContext;

resample::Mode mode_of(const Attrs& a) {
  resample::Mode mode = resample::Mode::nearest;
  resample::parse_mode(a.get_string("mode"), &mode);  // validated at construction
  return mode;
}

bool is_nearest(const Attrs& a) {
  return mode_of(a) != resample::Mode::linear;
}

AxisTaps axis_taps(const Attrs& a, const resample::Axis& axis) {
  AxisTaps taps(static_cast<size_t>(axis.out));
  const resample::Mode mode = mode_of(a);
  for (int64_t i = 0; i < axis.out; ++i) {
    if (mode == resample::Mode::linear) {
      const resample::LinearTap t = resample::linear_source(axis, i, a.get_bool("align_corners"));
      taps[static_cast<size_t>(i)] = {{t.lo, 1.0 - t.frac}, {t.hi, t.frac}};
    } else {
      taps[static_cast<size_t>(i)].push_back(
          {resample::nearest_source(axis, i, mode == resample::Mode::nearest_exact), 1.0});
    }
  }
  return taps;
}

Windows resample_windows(const Attrs& a, const Shape& in, const Shape& out) {
  return combine_axis_taps(resample_axis_taps(a, in, out), in, out);
}

// Checks mode, align_corners, scales and the input's rank/sizes; returns the spatial rank.
int64_t check_resample(const std::string& op, const std::vector<TensorType>& in, const Attrs& a,
                       const std::string& size_attr) {
  const std::string& mode = a.get_string("mode");
  resample::Mode parsed;
  if (!resample::parse_mode(mode, &parsed)) {
    ir::op_fail(op, in, "mode must be 'nearest', 'nearest-exact' or 'linear', got '{}'", mode);
  }
  if (parsed != resample::Mode::linear && a.get_bool("align_corners")) {
    ir::op_fail(op, in, "align_corners applies only to linear interpolation, not to mode '{}'", mode);
  }
  if (parsed == resample::Mode::linear || op == "upsample_grad") require_floating(op, in, 0, "input");
  const int64_t rank = static_cast<int64_t>(a.get_ints(size_attr).size());
  if (rank < 1) ir::op_fail(op, in, "{} must have at least one entry", size_attr);
  if (in[0].rank() < rank) {
    ir::op_fail(op, in, "expected an input of rank >= {} for {} spatial axes, got rank {}", rank, rank, in[0].rank());
  }
  spatial_attr(op, in, a, size_attr, rank, 1);
  for (int64_t d : spatial_dims(in[0].shape, rank)) {
    if (d < 1)
      ir::op_fail(op, in, "spatial sizes must be positive, got {}", shape_str(spatial_dims(in[0].shape, rank)));
  }
  if (a.has("scales")) {
    const std::vector<double>& scales = a.get_floats("scales");
    if (static_cast<int64_t>(scales.size()) != rank) {
      ir::op_fail(op, in, "scales has {} entries, expected one per spatial axis ({})", scales.size(), rank);
    }
    for (double f : scales) {
      if (!(std::isfinite(f) && f > 0.0)) ir::op_fail(op, in, "scale factors must be positive and finite, got {}", f);
    }
  }
  return rank;
}

// The attributes of the transposed op: the same mode, corners and scale factors, the other size.
Attrs mode_attrs(const Attrs& a, const std::string& size_attr, const Shape& size) {
  Attrs out{{"mode", a.get_string("mode")}, {"align_corners", a.get_bool("align_corners")}, {size_attr, size}};
  if (a.has("scales")) out.set("scales", a.get_floats("scales"));
  return out;
}

}  // namespace

std::vector<AxisTaps> resample_axis_taps(const Attrs& a, const Shape& in, const Shape& out) {
  std::vector<AxisTaps> axes;
  for (size_t d = 0; d < in.size(); ++d) {
    const double scale = a.has("scales") ? a.get_floats("scales")[d] : 0.0;
    axes.push_back(axis_taps(a, {in[d], out[d], scale}));
  }
  return axes;
}

bool resample_is_nearest(const Attrs& a) { return is_nearest(a); }

void register_upsample_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "upsample",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"size", ir::AttrKind::Ints},
                {"mode", ir::AttrKind::String},
                {"align_corners", ir::AttrKind::Bool},
                {"scales", ir::AttrKind::Floats, false}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t rank = check_resample("upsample", in, a, "size");
        return {{in[0].dtype, concat_shapes(leading_dims(in[0].shape, rank), a.get_ints("size"))}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Shape& size = a.get_ints("size");
        const Windows w = resample_windows(a, spatial_dims(in[0].shape(), static_cast<int64_t>(size.size())), size);
        // Nearest resampling copies elements, so it serves every dtype exactly.
        return {is_nearest(a) ? gather_windows(in[0], w, out[0].shape) : apply_windows(in[0], w, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const int64_t rank = static_cast<int64_t>(c.attrs().get_ints("size").size());
        return {ir::make_node1("upsample_grad", {c.cotangent()},
                               mode_attrs(c.attrs(), "input_size", spatial_dims(c.input(0).shape(), rank)))};
      },
      .decompose = upsample_decompose,
  });
  r.add(ir::OpDef{
      .name = "upsample_grad",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"input_size", ir::AttrKind::Ints},
                {"mode", ir::AttrKind::String},
                {"align_corners", ir::AttrKind::Bool},
                {"scales", ir::AttrKind::Floats, false}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const int64_t rank = check_resample("upsample_grad", in, a, "input_size");
        return {{in[0].dtype, concat_shapes(leading_dims(in[0].shape, rank), a.get_ints("input_size"))}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Shape& in_size = a.get_ints("input_size");
        const Windows w =
            resample_windows(a, in_size, spatial_dims(in[0].shape(), static_cast<int64_t>(in_size.size())));
        return {apply_windows_transposed(in[0], w, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const int64_t rank = static_cast<int64_t>(c.attrs().get_ints("input_size").size());
        return {ir::make_node1("upsample", {c.cotangent()},
                               mode_attrs(c.attrs(), "size", spatial_dims(c.input(0).shape(), rank)))};
      },
      .decompose = upsample_grad_decompose,
  });
}

}  // namespace tessera::ops::conv_detail
