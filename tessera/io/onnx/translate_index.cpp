// Gather, GatherElements, GatherND, ScatterElements (and the older Scatter), ScatterND, OneHot, and
// Compress / NonZero, whose positions are found at import. ONNX indices may be negative (counted from the
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

Tensor scatter_rows(const NodeContext& c, const Tensor& data, int64_t axis, const Tensor& index, const Tensor& updates,
                    const std::string& reduction);

// ScatterElements: updates written along `axis` at the positions `indices` names (scatter_rows).
std::vector<Tensor> scatter_elements(NodeContext& c) {
  const Tensor data = c.input(0), indices = c.input(1), updates = c.input(2);
  require_index_type(c, indices);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), data.rank());
  const std::string reduction = c.version() >= 16 ? c.attr_string("reduction", "none") : "none";
  const Tensor index = wrap_negative(indices, data.shape()[static_cast<size_t>(axis)]);
  return {scatter_rows(c, data, axis, index, updates, reduction)};
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

// The flat position of each index tuple (the last axis of `indices`, k entries) in the first k axes
// of `dims`, negative entries counted from the end of their axis.
Tensor linear_index(const Tensor& indices, const Shape& dims) {
  const int64_t k = indices.dim(-1);
  Tensor flat;
  for (int64_t j = 0; j < k; ++j) {
    Tensor part = ops::squeeze(ops::slice(indices, -1, j, j + 1), {indices.rank() - 1});
    part = wrap_negative(ops::cast(part, DType::i64), dims[static_cast<size_t>(j)]);
    flat = flat.defined() ? flat * static_cast<double>(dims[static_cast<size_t>(j)]) + part : part;
  }
  return flat;
}

// GatherND: out.shape = indices.shape[:-1] + data.shape[batch_dims + k:], each index tuple picking a
// slice of data within its batch.
std::vector<Tensor> gather_nd(NodeContext& c) {
  const Tensor data = c.input(0), indices = c.input(1);
  require_index_type(c, indices);
  const int64_t b = c.version() >= 12 ? c.attr_int("batch_dims", 0) : 0;
  if (indices.rank() < 1) c.fail("indices must have rank at least 1");
  const int64_t k = indices.dim(-1);
  if (b < 0 || b >= indices.rank() || b + k > data.rank()) c.fail("batch_dims {} and index length {} do not fit", b, k);
  const Shape& ds = data.shape();
  const Shape batch(ds.begin(), ds.begin() + b), picked(ds.begin() + b, ds.begin() + b + k),
      rest(ds.begin() + b + k, ds.end());
  const int64_t nb = shape_numel(batch), np = shape_numel(picked);
  Shape index_rows(indices.shape().begin(), indices.shape().end() - 1);
  const int64_t rows = shape_numel(index_rows);
  const int64_t per_batch = nb == 0 ? 0 : rows / nb;
  Tensor flat = ops::reshape(linear_index(ops::reshape(indices, {nb, per_batch, k}), picked), {nb, per_batch});
  flat = flat + ops::reshape(ops::arange(nb), {nb, 1}) * static_cast<double>(np);
  Shape table{nb * np};
  table.insert(table.end(), rest.begin(), rest.end());
  const Tensor out = ops::index_select(ops::reshape(data, table), 0, ops::reshape(flat, {rows}));
  Shape out_shape = index_rows;
  out_shape.insert(out_shape.end(), rest.begin(), rest.end());
  return {ops::reshape(out, out_shape)};
}

// reduction none: data where no index points, the scattered updates elsewhere (built from scatter_add
// on zeros; ONNX leaves repeated positions undefined for none); add accumulates.
Tensor scatter_rows(const NodeContext& c, const Tensor& data, int64_t axis, const Tensor& index, const Tensor& updates,
                    const std::string& reduction) {
  if (reduction == "add") return ops::scatter_add(data, axis, index, updates);
  if (reduction != "none") c.fail("reduction {} is not supported (none and add are)", reduction);
  if (data.dtype() == DType::boolean) c.fail("bool data is not supported");
  const Tensor hit = ops::gt(ops::scatter_add(ops::zeros_like(data), axis, index, ops::ones_like(updates)),
                             scalar_as(data, 0.0));
  return ops::where(hit, ops::scatter_add(ops::zeros_like(data), axis, index, updates), data);
}

// ScatterND: updates.shape = indices.shape[:-1] + data.shape[k:]; each index tuple addresses a slice.
std::vector<Tensor> scatter_nd(NodeContext& c) {
  const Tensor data = c.input(0), indices = c.input(1), updates = c.input(2);
  require_index_type(c, indices);
  const std::string reduction = c.version() >= 16 ? c.attr_string("reduction", "none") : "none";
  const int64_t k = indices.dim(-1);
  if (k > data.rank()) c.fail("index tuples of length {} for data of rank {}", k, data.rank());
  const Shape& ds = data.shape();
  const Shape picked(ds.begin(), ds.begin() + k), rest(ds.begin() + k, ds.end());
  const int64_t rows = indices.numel() / std::max<int64_t>(k, 1);
  Shape table{shape_numel(picked)}, update_rows{rows};
  table.insert(table.end(), rest.begin(), rest.end());
  update_rows.insert(update_rows.end(), rest.begin(), rest.end());
  Shape index_shape(update_rows.size(), 1);
  index_shape[0] = rows;
  const Tensor flat = ops::reshape(linear_index(ops::reshape(indices, {rows, k}), picked), index_shape);
  const Tensor out = scatter_rows(c, ops::reshape(data, table), 0, ops::broadcast_to(flat, update_rows),
                                  ops::reshape(updates, update_rows), reduction);
  return {ops::reshape(out, ds)};
}

// Compress and NonZero have output shapes that depend on values, so those values must be known at
// import (constants, or inputs fixed to their data: onnx_import.h); the positions are found here.
std::vector<Tensor> compress(NodeContext& c) {
  Tensor x = c.input(0);
  const Array condition = c.constant_input(1, "condition");
  if (condition.rank() != 1) c.fail("condition has rank {}, expected 1", condition.rank());
  int64_t axis = 0;
  if (c.has_attr("axis")) {
    axis = normalize_axis(c, c.attr_int("axis", 0), x.rank());
  } else {
    x = ops::reshape(x, {x.numel()});
  }
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  const std::vector<double> keep = condition.to_vector<double>();
  if (static_cast<int64_t>(keep.size()) > length) c.fail("condition has {} entries for an axis of {}", keep.size(), length);
  std::vector<int64_t> picked;
  for (size_t i = 0; i < keep.size(); ++i) {
    if (keep[i] != 0) picked.push_back(static_cast<int64_t>(i));
  }
  return {ops::index_select(x, axis, Tensor::from_vector<int64_t>(picked, {static_cast<int64_t>(picked.size())}))};
}

std::vector<Tensor> non_zero(NodeContext& c) {
  const Array x = c.constant_input(0, "X");
  const std::vector<double> v = x.to_vector<double>();
  const Shape& s = x.shape();
  std::vector<std::vector<int64_t>> coordinates(s.size());
  for (size_t flat = 0; flat < v.size(); ++flat) {
    if (v[flat] == 0) continue;
    size_t rest = flat;
    for (size_t a = s.size(); a-- > 0;) {
      coordinates[a].push_back(static_cast<int64_t>(rest % static_cast<size_t>(s[a])));
      rest /= static_cast<size_t>(s[a]);
    }
  }
  const int64_t count = s.empty() ? (v.at(0) != 0 ? 1 : 0) : static_cast<int64_t>(coordinates[0].size());
  std::vector<int64_t> out;
  for (const auto& axis : coordinates) out.insert(out.end(), axis.begin(), axis.end());
  if (s.empty()) out.assign(static_cast<size_t>(count), 0);
  return {Tensor::from_vector<int64_t>(out, {static_cast<int64_t>(std::max<size_t>(s.size(), 1)), count})};
}

}  // namespace

void add_index_translations(TranslationTable& t) {
  t.add("Compress", {9, 11}, compress);
  t.add("NonZero", {9, 13}, non_zero);
  t.add("GatherND", {11, 12, 13}, gather_nd);
  t.add("ScatterND", {11, 13, 16, 18}, scatter_nd);
  t.add("Scatter", {9, 11}, scatter_elements);
  t.add("Gather", {1, 11, 13}, gather);
  t.add("GatherElements", {11, 13}, gather_elements);
  t.add("ScatterElements", {11, 13, 16, 18}, scatter_elements);
  t.add("OneHot", {9, 11}, one_hot);
}

}  // namespace tessera::io::onnx
