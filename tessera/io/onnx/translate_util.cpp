#include "tessera/io/onnx/translate_util.h"

#include "tessera/ops/creation.h"
#include "tessera/ops/shape.h"

namespace tessera::io::onnx {

int64_t normalize_axis(const NodeContext& c, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) c.fail("{} {} is out of range for rank {}", what, axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const NodeContext& c, const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(c, a, rank, what);
    for (int64_t seen : out) {
      if (seen == n) c.fail("{} names axis {} twice", what, n);
    }
    out.push_back(n);
  }
  return out;
}

std::vector<int64_t> axes_or_all(std::vector<int64_t> axes, int64_t rank) {
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  return axes;
}

Tensor flatten_at(const NodeContext& c, const Tensor& x, int64_t axis) {
  const int64_t rank = x.rank();
  if (axis < -rank || axis > rank) c.fail("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  const Shape& s = x.shape();
  const int64_t rows = shape_numel(Shape(s.begin(), s.begin() + axis));
  return ops::reshape(x, {rows, shape_numel(Shape(s.begin() + axis, s.end()))});
}

Tensor scalar_as(const Tensor& x, double value) { return ops::scalar_like(x, value); }

void require_floating(const NodeContext& c, const Tensor& x, const char* role) {
  if (!is_floating(x.dtype())) c.fail("{} is {}; this operator is implemented for floating types only", role,
                                      dtype_name(x.dtype()));
}

WindowAttrs read_window(const NodeContext& c, const Shape& input_shape, std::vector<int64_t> kernel,
                        bool has_dilations) {
  const size_t n = kernel.size();
  if (input_shape.size() != n + 2) c.fail("input has rank {}, expected {} (N, C and {} spatial axes)",
                                          input_shape.size(), n + 2, n);
  WindowAttrs w;
  w.kernel = std::move(kernel);
  w.strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = has_dilations ? c.attr_ints("dilations", std::vector<int64_t>(n, 1)) : std::vector<int64_t>(n, 1);
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (w.strides.size() != n) c.fail("strides has {} values, expected {}", w.strides.size(), n);
  if (w.dilations.size() != n) c.fail("dilations has {} values, expected {}", w.dilations.size(), n);
  if (pads.size() != 2 * n) c.fail("pads has {} values, expected {}", pads.size(), 2 * n);
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] < 1) c.fail("strides[{}] is {}, expected at least 1", i, w.strides[i]);
    if (w.dilations[i] < 1) c.fail("dilations[{}] is {}, expected at least 1", i, w.dilations[i]);
    if (w.kernel[i] < 1) c.fail("kernel_shape[{}] is {}, expected at least 1", i, w.kernel[i]);
    if (pads[i] < 0 || pads[i + n] < 0) c.fail("pads are negative");
  }
  w.pad_begin.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(n));
  w.pad_end.assign(pads.begin() + static_cast<ptrdiff_t>(n), pads.end());
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = input_shape[i + 2];
      const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      const int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - in);
      const int64_t small = total / 2, large = total - total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pad_end[i] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad == "VALID") {
    std::fill(w.pad_begin.begin(), w.pad_begin.end(), 0);
    std::fill(w.pad_end.begin(), w.pad_end.end(), 0);
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad {} is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad);
  }
  return w;
}

}  // namespace tessera::io::onnx
