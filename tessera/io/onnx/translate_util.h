#pragma once
// Small helpers the op families share.
#include <cstdint>
#include <vector>

#include "tessera/io/onnx/node_context.h"

namespace tessera::io::onnx {

// `axis` in [-rank, rank) made non-negative; fails naming the attribute otherwise.
int64_t normalize_axis(const NodeContext& c, int64_t axis, int64_t rank, const char* what = "axis");
std::vector<int64_t> normalize_axes(const NodeContext& c, const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what = "axes");
// `axes` (already normalized), or every axis of `rank` when it is empty.
std::vector<int64_t> axes_or_all(std::vector<int64_t> axes, int64_t rank);

// Values given for the named axes only (opset 18's `axes` of Pad, Resize, ...) spread over every axis:
// `full` holds each axis's value where none is named. With `pairs`, values and full hold the begins of
// each axis then the ends (pads, roi). Fails naming `what` when the counts do not match.
template <class T>
std::vector<T> spread_over_axes(const NodeContext& c, const char* what, const std::vector<T>& values,
                                const std::vector<int64_t>& axes, std::vector<T> full, bool pairs = false) {
  const size_t n = axes.size(), per_axis = pairs ? 2 : 1, rank = full.size() / per_axis;
  if (values.size() != per_axis * n) c.fail("{} has {} entries for {} axes, expected {}", what, values.size(), n, per_axis * n);
  for (size_t i = 0; i < n; ++i) {
    const size_t a = static_cast<size_t>(axes[i]);
    full[a] = values[i];
    if (pairs) full[a + rank] = values[i + n];
  }
  return full;
}
// x as a matrix: the axes before `axis` (in [-rank, rank]) become the rows, the rest the columns
// (Flatten, and the softmax family before version 13).
Tensor flatten_at(const NodeContext& c, const Tensor& x, int64_t axis);
// A scalar of x's dtype.
Tensor scalar_as(const Tensor& x, double value);
// Fails unless x has a floating dtype, for translations built from transcendental ops.
void require_floating(const NodeContext& c, const Tensor& x, const char* role = "input");
// The ONNX spatial attributes of conv and pooling, filled with the spec's defaults for `spatial` axes.
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pad_begin, pad_end;
};
// Reads strides / dilations / pads / auto_pad for a window of `kernel` over x's trailing spatial axes
// (auto_pad SAME_UPPER / SAME_LOWER resolved to explicit pads, VALID to none).
WindowAttrs read_window(const NodeContext& c, const Shape& input_shape, std::vector<int64_t> kernel,
                        bool has_dilations);

}  // namespace tessera::io::onnx
