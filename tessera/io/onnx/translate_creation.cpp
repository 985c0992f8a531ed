// Ops that make tensors from attributes or from values known at import: Constant, ConstantOfShape,
// Range, EyeLike, the signal windows, and Shape / Size, whose results follow from the (static) input types.
#include <cmath>

#include "tessera/io/onnx/onnx_dtype.h"
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

Tensor ints_tensor(const std::vector<int64_t>& values, const Shape& shape) {
  return Tensor::from_vector<int64_t>(values, shape);
}

std::vector<Tensor> constant(NodeContext& c) {
  const char* kinds[] = {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                         "value_strings", "sparse_value"};
  int present = 0;
  for (const char* k : kinds) present += c.has_attr(k) ? 1 : 0;
  if (present != 1) c.fail("needs exactly one value attribute, has {}", present);
  if (c.has_attr("value")) return {Tensor::from_array(c.attr_tensor("value"))};
  if (c.has_attr("value_float")) {
    return {Tensor::from_vector<float>({static_cast<float>(c.attr_float("value_float", 0))}, {})};
  }
  if (c.has_attr("value_floats")) {
    const std::vector<double> v = c.attr_floats("value_floats");
    return {Tensor::from_vector<float>(std::vector<float>(v.begin(), v.end()), {static_cast<int64_t>(v.size())})};
  }
  if (c.has_attr("value_int")) return {ints_tensor({c.attr_int("value_int", 0)}, {})};
  if (c.has_attr("value_ints")) {
    const std::vector<int64_t> v = c.attr_ints("value_ints");
    return {ints_tensor(v, {static_cast<int64_t>(v.size())})};
  }
  c.fail("string and sparse constants are not supported");
}

std::vector<Tensor> constant_of_shape(NodeContext& c) {
  const std::vector<int64_t> dims = c.constant_ints(0, "shape");
  for (int64_t d : dims) {
    if (d < 0) c.fail("shape has a negative dimension {}", d);
  }
  Array fill = c.has_attr("value") ? c.attr_tensor("value") : Array::scalar(0.0, DType::f32);
  if (fill.numel() != 1) c.fail("value has {} elements, expected one", fill.numel());
  const Shape shape(dims.begin(), dims.end());
  return {ops::full(shape, fill.to_vector<double>()[0], fill.dtype())};
}

// Range: ceil((limit - start) / delta) elements (none when negative), start + i * delta.
std::vector<Tensor> range(NodeContext& c) {
  const Array start = c.constant_input(0, "start");
  const DType dt = start.dtype();
  const double s = c.constant_doubles(0, "start").at(0), l = c.constant_doubles(1, "limit").at(0);
  const double d = c.constant_doubles(2, "delta").at(0);
  if (d == 0) c.fail("delta is 0");
  const double count = std::max(0.0, std::ceil((l - s) / d));
  if (!(count < 1e9)) c.fail("Range would have {} elements", count);
  const Tensor i = ops::arange(static_cast<int64_t>(count), DType::f64);
  return {ops::cast(i * d + s, dt)};
}

std::vector<Tensor> eye_like(NodeContext& c) {
  const Tensor x = c.input(0);
  if (x.rank() != 2) c.fail("input has rank {}, expected 2", x.rank());
  const DType dt = c.has_attr("dtype") ? require_dtype(c.attr_int("dtype", 0), c.where()) : x.dtype();
  return {ops::eye(x.dim(0), x.dim(1), c.attr_int("k", 0), dt)};
}

std::vector<Tensor> shape_of(NodeContext& c) {
  const Shape& s = c.input(0).shape();
  const int64_t rank = static_cast<int64_t>(s.size());
  // start / end (version 15) select a range of axes, clamped as Python slices are.
  int64_t start = c.attr_int("start", 0), end = c.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(s[static_cast<size_t>(i)]);
  return {ints_tensor(dims, {static_cast<int64_t>(dims.size())})};
}

// Hann, Hamming and Blackman windows (opset 17): sum_k a_k cos(2 pi k n / N) with alternating signs,
// N = size when periodic, size - 1 when symmetric; computed here, the size being known at import.
std::vector<Tensor> cosine_window(NodeContext& c, const std::vector<double>& coefficients) {
  const std::vector<int64_t> size = c.constant_ints(0, "size");
  if (size.size() != 1 || size[0] < 0 || size[0] > (int64_t{1} << 24)) c.fail("size must be one number in [0, 2^24]");
  const DType dt = require_dtype(c.attr_int("output_datatype", 1), c.where() + ": attribute 'output_datatype'");
  const bool periodic = c.attr_int("periodic", 1) != 0;
  const int64_t n = size[0];
  const double denominator = static_cast<double>(periodic ? n : n - 1);
  std::vector<double> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = 0, sign = 1;
    for (size_t k = 0; k < coefficients.size(); ++k, sign = -sign) {
      v += sign * coefficients[k] * std::cos(2 * M_PI * static_cast<double>(k) * static_cast<double>(i) / denominator);
    }
    w[static_cast<size_t>(i)] = v;
  }
  return {ops::cast(Tensor::from_vector<double>(w, {n}), dt)};
}

}  // namespace

void add_creation_translations(TranslationTable& t) {
  t.add("HannWindow", {17}, [](NodeContext& c) { return cosine_window(c, {0.5, 0.5}); });
  t.add("HammingWindow", {17}, [](NodeContext& c) { return cosine_window(c, {25.0 / 46.0, 21.0 / 46.0}); });
  t.add("BlackmanWindow", {17}, [](NodeContext& c) { return cosine_window(c, {0.42, 0.5, 0.08}); });
  t.add("Constant", {1, 9, 11, 12, 13}, constant);
  t.add("ConstantOfShape", {9}, constant_of_shape);
  t.add("Range", {11}, range);
  t.add("EyeLike", {9}, eye_like);
  t.add("Shape", {1, 13, 15}, shape_of);
  t.add("Size", {1, 13}, [](NodeContext& c) -> std::vector<Tensor> {
    return {ints_tensor({c.input(0).numel()}, {})};
  });
}

}  // namespace tessera::io::onnx
