// Slice, Split, Concat, Pad and CenterCropPad: ops that cut tensors into parts or join them.
#include <algorithm>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/shape.h"

namespace tessera::io::onnx {

namespace {

// ONNX clamps starts and ends as Python slices do, so ops::slice's Python semantics apply directly.
std::vector<Tensor> slice(NodeContext& c) {
  Tensor x = c.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.version() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  } else {
    starts = c.constant_ints(1, "starts");
    ends = c.constant_ints(2, "ends");
    if (c.has_input(3)) axes = c.constant_ints(3, "axes");
    if (c.has_input(4)) steps = c.constant_ints(4, "steps");
  }
  if (starts.size() != ends.size()) c.fail("starts has {} entries, ends {}", starts.size(), ends.size());
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) c.fail("starts, ends, axes and steps differ in length");
  const std::vector<int64_t> norm = normalize_axes(c, axes, x.rank());
  for (size_t i = 0; i < norm.size(); ++i) {
    if (steps[i] == 0) c.fail("steps[{}] is 0", i);
    x = ops::slice(x, norm[i], starts[i], ends[i], steps[i]);
  }
  return {x};
}

std::vector<Tensor> split(NodeContext& c) {
  const Tensor x = c.input(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), x.rank());
  std::vector<int64_t> sizes;
  if (c.version() >= 13) {
    if (c.has_input(1)) sizes = c.constant_ints(1, "split");
  } else {
    sizes = c.attr_ints("split");
  }
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  const int64_t parts = static_cast<int64_t>(c.output_count());
  // Split-18's num_outputs: parts of ceil(length / n), the last one shorter when n does not divide it.
  const int64_t num_outputs = c.version() >= 18 ? c.attr_int("num_outputs", 0) : 0;
  if (num_outputs != 0) {
    if (!sizes.empty()) c.fail("split and num_outputs are both given");
    if (num_outputs != parts) c.fail("num_outputs is {} but the node has {} outputs", num_outputs, parts);
    const int64_t chunk = (length + parts - 1) / parts;
    for (int64_t at = 0; at < parts; ++at) sizes.push_back(std::clamp<int64_t>(length - at * chunk, 0, chunk));
    if (parts > 1 && sizes.back() == 0) c.fail("axis length {} leaves the last of {} parts empty", length, parts);
  }
  if (sizes.empty()) {
    if (parts < 1 || length % parts != 0) c.fail("axis length {} does not split into {} equal parts", length, parts);
    sizes.assign(static_cast<size_t>(parts), length / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts) c.fail("split has {} sizes for {} outputs", sizes.size(), parts);
  return ops::split(x, sizes, axis);
}

std::vector<Tensor> concat(NodeContext& c) {
  const std::vector<Tensor> xs = c.inputs();
  if (xs.empty()) c.fail("needs at least one input");
  return {ops::concat(xs, normalize_axis(c, c.required_int("axis"), xs[0].rank()))};
}

// Edge padding: each side gets copies of the edge slice.
Tensor pad_edge(Tensor x, const std::vector<std::pair<int64_t, int64_t>>& widths) {
  for (size_t i = 0; i < widths.size(); ++i) {
    const auto [before, after] = widths[i];
    if (before == 0 && after == 0) continue;
    const int64_t axis = static_cast<int64_t>(i), n = x.shape()[i];
    std::vector<Tensor> parts;
    auto edge = [&](int64_t at, int64_t count) {
      Shape s = x.shape();
      s[i] = count;
      return ops::broadcast_to(ops::slice(x, axis, at, at + 1), s);
    };
    if (before > 0) parts.push_back(edge(0, before));
    parts.push_back(x);
    if (after > 0) parts.push_back(edge(n - 1, after));
    x = ops::concat(parts, axis);
  }
  return x;
}

// Pad: pads, mode and value are attributes before version 11, inputs from it. Negative pads crop.
std::vector<Tensor> pad(NodeContext& c) {
  Tensor x = c.input(0);
  const std::string mode = c.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  double value = 0;
  if (c.version() < 11) {
    pads = c.attr_ints("pads");
    value = c.attr_float("value", 0.0);
  } else {
    pads = c.constant_ints(1, "pads");
    if (c.has_input(2)) {
      const std::vector<double> v = c.constant_doubles(2, "constant_value");
      if (v.size() != 1) c.fail("constant_value has {} elements, expected one", v.size());
      value = v[0];
    }
  }
  const size_t rank = static_cast<size_t>(x.rank());
  // Pad-18: pads may cover only the axes its fourth input names (begins for each, then ends).
  if (c.version() >= 18 && c.has_input(3)) {
    const std::vector<int64_t> axes = normalize_axes(c, c.constant_ints(3, "axes"), x.rank());
    pads = spread_over_axes(c, "pads", pads, axes, std::vector<int64_t>(2 * rank, 0), /*pairs=*/true);
  }
  if (pads.size() != 2 * rank) c.fail("pads has {} entries, expected {}", pads.size(), 2 * rank);
  std::vector<std::pair<int64_t, int64_t>> widths(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t before = pads[i], after = pads[i + rank];
    if (before < 0 || after < 0) {
      x = ops::slice(x, static_cast<int64_t>(i), before < 0 ? -before : 0,
                     after < 0 ? x.shape()[i] + after : x.shape()[i]);
    }
    widths[i] = {std::max<int64_t>(before, 0), std::max<int64_t>(after, 0)};
  }
  if (mode == "constant") return {ops::pad(x, widths, ops::PadMode::Constant, value)};
  if (mode == "reflect") return {ops::pad(x, widths, ops::PadMode::Reflect)};
  if (mode == "edge") {
    for (size_t i = 0; i < rank; ++i) {
      if (x.shape()[i] == 0 && (widths[i].first > 0 || widths[i].second > 0)) c.fail("edge padding of an empty axis");
    }
    return {pad_edge(x, widths)};
  }
  c.fail("mode {} is not constant, reflect or edge", mode);
}

// CenterCropPad-18: each named axis cropped or zero-padded to its target length around the centre
// (the odd element of a crop or pad goes to the end).
std::vector<Tensor> center_crop_pad(NodeContext& c) {
  Tensor x = c.input(0);
  const std::vector<int64_t> target = c.constant_ints(1, "shape");
  const std::vector<int64_t> axes =
      axes_or_all(c.has_attr("axes") ? normalize_axes(c, c.attr_ints("axes"), x.rank()) : std::vector<int64_t>{}, x.rank());
  if (target.size() != axes.size()) c.fail("shape has {} entries for {} axes", target.size(), axes.size());
  std::vector<std::pair<int64_t, int64_t>> widths(static_cast<size_t>(x.rank()), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t length = x.shape()[static_cast<size_t>(axes[i])];
    if (target[i] < 0) c.fail("shape[{}] is {}, expected a length", i, target[i]);
    if (target[i] < length) {
      const int64_t start = (length - target[i]) / 2;
      x = ops::slice(x, axes[i], start, start + target[i]);
    } else if (target[i] > length) {
      const int64_t before = (target[i] - length) / 2;
      widths[static_cast<size_t>(axes[i])] = {before, target[i] - length - before};
    }
  }
  return {ops::pad(x, widths, ops::PadMode::Constant, 0.0)};
}

}  // namespace

void add_slice_translations(TranslationTable& t) {
  t.add("Slice", {1, 10, 11, 13}, slice);
  t.add("Split", {1, 2, 11, 13, 18}, 2, split);
  t.add("Concat", {1, 4, 11, 13}, 4, concat);
  t.add("Pad", {1, 2, 11, 13, 18}, 2, pad);
  t.add("CenterCropPad", {18}, center_crop_pad);
}

}  // namespace tessera::io::onnx
