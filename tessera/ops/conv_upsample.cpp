// Resampling of the trailing spatial axes (as many as the `size` attribute has entries) with PyTorch's
// conventions:
//   nearest: src = floor(dst * in / out), computed exactly in integers (PyTorch's 'nearest' mode)
//   linear:  separable (bi/tri)linear interpolation; align_corners maps corner pixel centres onto each
//            other (src = dst * (in - 1) / (out - 1)), otherwise src = (dst + 0.5) * in / out - 0.5,
//            clamped at 0, with the upper neighbour clamped to the last pixel.
// upsample is linear in its input; upsample_grad is its transpose, and each one's VJP is the other.
#include <algorithm>
#include <cmath>

#include "tessera/ir/op_def.h"
#include "tessera/ops/conv.h"
#include "tessera/ops/conv_util.h"
#include "tessera/ops/ops.h"

namespace tessera::ops::conv_detail {

namespace {
using ir::Value;
using ir::VjpContext;

AxisTaps nearest_taps(int64_t in, int64_t out) {
  AxisTaps taps(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) taps[static_cast<size_t>(i)].push_back({std::min(i * in / out, in - 1), 1.0});
  return taps;
}

AxisTaps linear_taps(int64_t in, int64_t out, bool align_corners) {
  AxisTaps taps(static_cast<size_t>(out));
  const double scale = align_corners ? (out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                                     : static_cast<double>(in) / static_cast<double>(out);
  for (int64_t i = 0; i < out; ++i) {
    const double di = static_cast<double>(i);
    const double src = align_corners ? scale * di : std::max(scale * (di + 0.5) - 0.5, 0.0);
    const int64_t lo = std::min(static_cast<int64_t>(src), in - 1);
    const int64_t hi = lo < in - 1 ? lo + 1 : lo;
    const double frac = src - static_cast<double>(lo);
    taps[static_cast<size_t>(i)] = {{lo, 1.0 - frac}, {hi, frac}};
  }
  return taps;
}

bool is_nearest(const Attrs& a) {
  return a.get_string("mode") == "nearest";
}

Windows resample_windows(const Attrs& a, const Shape& in, const Shape& out) {
  std::vector<AxisTaps> axes;
  for (size_t d = 0; d < in.size(); ++d) {
    axes.push_back(is_nearest(a) ? nearest_taps(in[d], out[d])
                                 : linear_taps(in[d], out[d], a.get_bool("align_corners")));
  }
  return combine_axis_taps(axes, in, out);
}

// Checks mode, align_corners and the input's rank/sizes; returns the spatial rank.
int64_t check_resample(const std::string& op, const std::vector<TensorType>& in, const Attrs& a,
                       const std::string& size_attr) {
  const std::string& mode = a.get_string("mode");
  if (mode != "nearest" && mode != "linear") {
    ir::op_fail(op, in, "mode must be 'nearest' or 'linear', got '{}'", mode);
  }
  if (mode == "nearest" && a.get_bool("align_corners")) {
    ir::op_fail(op, in, "align_corners applies only to linear interpolation, not to mode 'nearest'");
  }
  if (mode == "linear" || op == "upsample_grad") require_floating(op, in, 0, "input");
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
  return rank;
}

Attrs mode_attrs(const Attrs& a, const std::string& size_attr, const Shape& size) {
  return Attrs{{"mode", a.get_string("mode")}, {"align_corners", a.get_bool("align_corners")}, {size_attr, size}};
}

}  // namespace

void register_upsample_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "upsample",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"size", ir::AttrKind::Ints}, {"mode", ir::AttrKind::String}, {"align_corners", ir::AttrKind::Bool}},
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
  });
  r.add(ir::OpDef{
      .name = "upsample_grad",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"input_size", ir::AttrKind::Ints},
                {"mode", ir::AttrKind::String},
                {"align_corners", ir::AttrKind::Bool}},
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
  });
}

}  // namespace tessera::ops::conv_detail
