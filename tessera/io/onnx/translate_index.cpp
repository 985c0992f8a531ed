// Gather, GatherElements, ScatterElements and OneHot. ONNX indices may be negative (counted from the
// end of the axis); Tessera's index ops take 0..size-1, so negative ones are shifted first.
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/index.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

Tensor wrap_negative(const Tensor& index, int64_t size) {
  return ops::where(ops::lt(index, scalar_as(index, 0.0)), index + scalar_as(index, static_cast<double>(size)), index);
}

void require_index_type(const NodeContext& c, const Tensor& index) {
  if (index.dtype() != DType::i32 && index.dtype() != DType::i64) {
    c.fail("indices are {}, expected int32 or int64", dtype_name(index.dtype()));
  }
}

// out.shape = data.shape[:axis] + indices.shape + data.shape[axis+1:].
std::vector<Tensor> gather(NodeContext& c) {
  const Tensor data = c.input(0), indices = c.input(1);
  require_index_type(c, indices);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), data.rank());
  const int64_t size = data.shape()[static_cast<size_t>(axis)];
  const Tensor flat = ops::reshape(wrap_negative(indices, size), {indices.numel()});
  const Tensor picked = ops::index_select(data, axis, flat);
  Shape out(data.shape().begin(), data.shape().begin() + axis);
  out.insert(out.end(), indices.shape().begin(), indices.shape().end());
  out.insert(out.end(), data.shape().begin() + axis + 1, data.shape().end());
  return {ops::reshape(picked, out)};
}

std::vector<Tensor> gather_elements(NodeContext& c) {
  const Tensor data = c.input(0), indices = c.input(1);
  require_index_type(c, indices);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), data.rank());
  return {ops::take_along_axis(data, wrap_negative(indices, data.shape()[static_cast<size_t>(axis)]), axis)};
}

// reduction none replaces the addressed elements: data where no index points, the scattered updates
// elsewhere (built from scatter_add on zeros; ONNX leaves repeated indices undefined for none).
std::vector<Tensor> scatter_elements(NodeContext& c) {
  const Tensor data = c.input(0), indices = c.input(1), updates = c.input(2);
  require_index_type(c, indices);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), data.rank());
  const std::string reduction = c.version() >= 16 ? c.attr_string("reduction", "none") : "none";
  const Tensor index = wrap_negative(indices, data.shape()[static_cast<size_t>(axis)]);
  if (reduction == "add") return {ops::scatter_add(data, axis, index, updates)};
  if (reduction != "none") c.fail("reduction {} is not supported (none and add are)", reduction);
  if (data.dtype() == DType::boolean) c.fail("bool data is not supported");
  const Tensor hit = ops::gt(ops::scatter_add(ops::zeros_like(data), axis, index, ops::ones_like(updates)),
                             scalar_as(data, 0.0));
  return {ops::where(hit, ops::scatter_add(ops::zeros_like(data), axis, index, updates), data)};
}

// OneHot: indices (negative ones count from depth), depth, values [off, on]; the new axis goes at `axis`.
std::vector<Tensor> one_hot(NodeContext& c) {
  const Tensor indices = c.input(0);
  const std::vector<double> depth_value = c.constant_doubles(1, "depth");
  if (depth_value.size() != 1 || depth_value[0] < 1) c.fail("depth must be one positive number");
  const int64_t depth = static_cast<int64_t>(depth_value[0]);
  const Tensor values = c.input(2);
  if (values.numel() != 2) c.fail("values has {} elements, expected [off, on]", values.numel());
  const int64_t rank = indices.rank() + 1;
  const int64_t axis = normalize_axis(c, c.attr_int("axis", -1), rank);
  const Tensor index = ops::cast(is_floating(indices.dtype()) ? ops::floor(indices) : indices, DType::i64);
  const Tensor wrapped = wrap_negative(index, depth);
  // Out-of-range indices give a row of `off` values, as the spec says.
  Shape iota_shape(static_cast<size_t>(rank), 1);
  iota_shape[static_cast<size_t>(axis)] = depth;
  const Tensor iota = ops::reshape(ops::arange(depth), iota_shape);
  const Tensor hit = ops::eq(ops::unsqueeze(wrapped, axis), iota);
  const Tensor off = ops::slice(ops::reshape(values, {2}), 0, 0, 1), on = ops::slice(ops::reshape(values, {2}), 0, 1, 2);
  return {ops::where(hit, ops::reshape(on, {}), ops::reshape(off, {}))};
}

}  // namespace

void add_index_translations(TranslationTable& t) {
  t.add("Gather", {1, 11, 13}, gather);
  t.add("GatherElements", {11, 13}, gather_elements);
  t.add("ScatterElements", {11, 13, 16}, scatter_elements);
  t.add("OneHot", {9, 11}, one_hot);
}

}  // namespace tessera::io::onnx
