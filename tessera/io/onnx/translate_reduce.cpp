// Reductions (axes as an attribute; an input from version 13 for ReduceSum, 18 for the others), ArgMax /
// ArgMin, TopK and CumSum. Empty axes reduce over every axis, unless noop_with_empty_axes says otherwise.
#include <functional>
#include <limits>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/index.h"
#include "tessera/ops/reduce.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

using ReduceFn = std::function<Tensor(const Tensor& x, const ops::Axes& axes, bool keepdims)>;

// axes_input_since: the op version from which axes arrive as an input instead of an attribute.
void add_reduce(TranslationTable& t, const char* op, std::vector<int64_t> versions, int64_t axes_input_since, ReduceFn fn) {
  t.add(op, std::move(versions), [fn, axes_input_since](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    const bool keepdims = c.attr_int("keepdims", 1) != 0;
    std::vector<int64_t> axes;
    bool noop = false;
    if (c.version() >= axes_input_since) {
      if (c.has_input(1)) axes = c.constant_ints(1, "axes");
      noop = c.attr_int("noop_with_empty_axes", 0) != 0;
    } else {
      axes = c.attr_ints("axes");
    }
    if (axes.empty() && noop) return {x};
    return {fn(x, axes_or_all(normalize_axes(c, axes, x.rank()), x.rank()), keepdims)};
  });
}

// Integer means truncate, as ONNX's reference computes them in floating point and casts back.
Tensor mean_keeping_dtype(const Tensor& x, const ops::Axes& axes, bool keepdims) {
  if (is_floating(x.dtype())) return ops::mean(x, axes, keepdims);
  return ops::cast(ops::mean(ops::cast(x, DType::f64), axes, keepdims), x.dtype());
}

// Sums of integers stay in the input's type (Tessera's sum of bool widens; ONNX has no bool sums).
Tensor sum_keeping_dtype(const Tensor& x, const ops::Axes& axes, bool keepdims) {
  Tensor s = ops::sum(x, axes, keepdims);
  return s.dtype() == x.dtype() ? s : ops::cast(s, x.dtype());
}

std::vector<Tensor> arg_reduce(NodeContext& c, bool is_max) {
  Tensor x = c.input(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), x.rank());
  const bool keepdims = c.attr_int("keepdims", 1) != 0;
  const bool last = c.attr_int("select_last_index", 0) != 0;
  // The last extreme is the first one of the reversed axis, counted from the end.
  if (last) x = ops::flip(x, {axis});
  Tensor index = is_max ? ops::argmax(x, axis, keepdims) : ops::argmin(x, axis, keepdims);
  if (last) index = scalar_as(index, static_cast<double>(x.shape()[static_cast<size_t>(axis)] - 1)) - index;
  return {index};
}

std::vector<Tensor> cumsum(NodeContext& c) {
  const Tensor x = c.input(0);
  const std::vector<int64_t> axis = c.constant_ints(1, "axis");
  if (axis.size() != 1) c.fail("axis has {} elements, expected one", axis.size());
  const int64_t a = normalize_axis(c, axis[0], x.rank());
  const bool reverse = c.attr_int("reverse", 0) != 0;
  Tensor y = ops::cumsum(x, a, reverse);
  if (c.attr_int("exclusive", 0) != 0) y = y - x;
  return {y};
}

// TopK as k rounds of arg-extreme and masking (k is known at import and small): ties go to the lower
// index, as the spec asks; the values come out sorted either way.
std::vector<Tensor> top_k(NodeContext& c) {
  const Tensor x = c.input(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", -1), x.rank());
  const bool largest = c.attr_int("largest", 1) != 0;
  c.ignore_attr("sorted");  // the rounds produce sorted results, which every order allows
  const std::vector<int64_t> k = c.constant_ints(1, "K");
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  if (k.size() != 1 || k[0] < 0 || k[0] > length) c.fail("K must be one number in [0, {}]", length);
  if (k[0] > 256) c.fail("K = {} is more than the 256 this translation unrolls", k[0]);
  Shape iota_shape(static_cast<size_t>(x.rank()), 1);
  iota_shape[static_cast<size_t>(axis)] = length;
  const Tensor iota = ops::reshape(ops::arange(length), iota_shape);
  const Tensor fill = scalar_as(x, largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  Tensor rest = x;
  std::vector<Tensor> values, indices;
  for (int64_t i = 0; i < k[0]; ++i) {
    const Tensor index = largest ? ops::argmax(rest, axis, true) : ops::argmin(rest, axis, true);
    values.push_back(ops::take_along_axis(x, index, axis));
    indices.push_back(index);
    rest = ops::where(ops::eq(iota, index), fill, rest);
  }
  if (values.empty()) c.fail("K = 0 is not supported");
  return {ops::concat(values, axis), ops::concat(indices, axis)};
}

}  // namespace

void add_reduce_translations(TranslationTable& t) {
  t.add("TopK", {1, 10, 11}, 10, top_k);
  add_reduce(t, "ReduceSum", {1, 11, 13}, 13, sum_keeping_dtype);
  add_reduce(t, "ReduceMean", {1, 11, 13, 18}, 18, mean_keeping_dtype);
  add_reduce(t, "ReduceMax", {1, 11, 12, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    return ops::max(x, a, k);
  });
  add_reduce(t, "ReduceMin", {1, 11, 12, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    return ops::min(x, a, k);
  });
  add_reduce(t, "ReduceProd", {1, 11, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    return ops::prod(x, a, k);
  });
  add_reduce(t, "ReduceL1", {1, 11, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    return sum_keeping_dtype(ops::abs(x), a, k);
  });
  add_reduce(t, "ReduceL2", {1, 11, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    if (is_floating(x.dtype())) return ops::sqrt(ops::sum(x * x, a, k));
    return ops::cast(ops::sqrt(ops::sum(ops::cast(x * x, DType::f64), a, k)), x.dtype());
  });
  add_reduce(t, "ReduceSumSquare", {1, 11, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    return sum_keeping_dtype(x * x, a, k);
  });
  add_reduce(t, "ReduceLogSum", {1, 11, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    return ops::log(ops::sum(x, a, k));
  });
  add_reduce(t, "ReduceLogSumExp", {1, 11, 13, 18}, 18, [](const Tensor& x, const ops::Axes& a, bool k) {
    return ops::logsumexp(x, a, k);
  });
  t.add("ArgMax", {1, 11, 12, 13}, [](NodeContext& c) { return arg_reduce(c, true); });
  t.add("ArgMin", {1, 11, 12, 13}, [](NodeContext& c) { return arg_reduce(c, false); });
  t.add("CumSum", {11, 14}, cumsum);
}

}  // namespace tessera::io::onnx
