// Linear quantization to 8 bits: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear. Rounding
// is half to even and the cast to the 8-bit type saturates, as the spec asks.
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/reduce.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

// A per-axis scale or zero point ([C] along `axis`, version 13) shaped to broadcast; scalars as they are.
Tensor along_axis(const NodeContext& c, const Tensor& v, const Tensor& x) {
  if (v.rank() == 0 || v.numel() == 1) return ops::reshape(v, {});
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 1), x.rank());
  if (v.rank() != 1 || v.numel() != x.shape()[static_cast<size_t>(axis)]) {
    c.fail("scale of shape [{}] does not match axis {} of the input", v.numel(), axis);
  }
  Shape s(static_cast<size_t>(x.rank()), 1);
  s[static_cast<size_t>(axis)] = v.numel();
  return ops::reshape(v, s);
}

void require_8bit(const NodeContext& c, DType dt) {
  if (dt != DType::u8 && dt != DType::i8) c.fail("zero point is {}, expected uint8 or int8", dtype_name(dt));
}

Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, DType dt) {
  return ops::cast(ops::round(x / scale) + ops::cast(zero_point, x.dtype()), dt);
}

std::vector<Tensor> quantize_linear(NodeContext& c) {
  const Tensor x = c.input(0);
  require_floating(c, x);
  if (c.version() < 13) c.ignore_attr("axis");
  const Tensor scale = along_axis(c, c.input(1), x);
  const Tensor zero_point = c.has_input(2) ? along_axis(c, c.input(2), x) : ops::zeros({}, DType::u8);
  require_8bit(c, zero_point.dtype());
  return {quantize(x, ops::cast(scale, x.dtype()), zero_point, zero_point.dtype())};
}

std::vector<Tensor> dequantize_linear(NodeContext& c) {
  const Tensor x = c.input(0);
  if (c.version() < 13) c.ignore_attr("axis");
  const Tensor scale = along_axis(c, c.input(1), x);
  const Tensor zero_point = c.has_input(2) ? along_axis(c, c.input(2), x) : ops::zeros({}, x.dtype());
  return {(ops::cast(x, scale.dtype()) - ops::cast(zero_point, scale.dtype())) * scale};
}

// Scale and zero point cover [min(0, min x), max(0, max x)] with 0..255.
std::vector<Tensor> dynamic_quantize_linear(NodeContext& c) {
  const Tensor x = c.input(0);
  require_floating(c, x);
  const Tensor zero = scalar_as(x, 0.0);
  const Tensor lo = ops::minimum(ops::min(x), zero), hi = ops::maximum(ops::max(x), zero);
  const Tensor scale = (hi - lo) / 255.0;
  const Tensor zero_point = ops::cast(ops::clamp(ops::round(-lo / scale), 0.0, 255.0), DType::u8);
  return {quantize(x, scale, zero_point, DType::u8), scale, zero_point};
}

}  // namespace

void add_quant_translations(TranslationTable& t) {
  t.add("QuantizeLinear", {10, 13}, quantize_linear);
  t.add("DequantizeLinear", {10, 13}, dequantize_linear);
  t.add("DynamicQuantizeLinear", {11}, dynamic_quantize_linear);
}

}  // namespace tessera::io::onnx
