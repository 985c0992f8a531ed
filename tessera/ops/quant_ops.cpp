// The quantized-weight ops: dequantize and quantized_matmul. The reference kernels decode the blocks
// exactly (tessera/quant) and multiply in double, so they are the oracle for the integer-dot CPU
// kernels in tessera/kernels/quant, which also quantize the activations.
#include <cstring>

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"
#include "tessera/ops/register.h"
#include "tessera/quant/quantize.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

// The block type named by the `type` attribute, which must be decodable.
quant::GgmlType block_type(const std::string& op, const std::vector<TensorType>& in, const Attrs& a) {
  const std::string& name = a.get_string("type");
  quant::GgmlType type;
  try {
    type = quant::parse_type(name);
  } catch (const Error& e) {
    ir::op_fail(op, in, "{}", e.what());
  }
  if (!quant::type_traits(type).can_dequantize) ir::op_fail(op, in, "type '{}' cannot be decoded", name);
  return type;
}

// Logical row length K of u8 blocks whose last dimension is `bytes`.
int64_t values_per_row(const std::string& op, const std::vector<TensorType>& in, const TensorType& blocks,
                       quant::GgmlType type) {
  if (blocks.dtype != DType::u8) {
    ir::op_fail(op, in, "the quantized operand must be u8 (raw {} blocks), got {}", quant::type_name(type),
                dtype_name(blocks.dtype));
  }
  if (blocks.shape.empty()) ir::op_fail(op, in, "the quantized operand needs at least one dimension (bytes per row)");
  const int64_t bytes = blocks.shape.back();
  const quant::TypeTraits& t = quant::type_traits(type);
  if (bytes % t.type_size != 0) {
    ir::op_fail(op, in, "rows of {} bytes are not a whole number of {} blocks ({} bytes each)", bytes, t.name,
                t.type_size);
  }
  return bytes / t.type_size * t.block_size;
}

// Decodes u8 blocks [..., row_bytes] into f32 [..., K].
Array decode(const Array& blocks, quant::GgmlType type, int64_t k) {
  const Array c = blocks.contiguous();
  Shape shape = c.shape();
  const int64_t row_bytes = shape.back();
  shape.back() = k;
  Array out = Array::empty(DType::f32, shape);
  const int64_t rows = k == 0 ? 0 : out.numel() / k;
  const auto* src = c.data<const uint8_t>();
  float* dst = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) quant::dequantize_row(type, src + r * row_bytes, dst + r * k, k);
  return out;
}

struct QMatmulDims {
  int64_t k = 0, n = 0;
};

QMatmulDims qmatmul_dims(const std::vector<TensorType>& in, quant::GgmlType type) {
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  if (!is_floating(x.dtype)) ir::op_fail("quantized_matmul", in, "x must be floating, got {}", dtype_name(x.dtype));
  if (x.shape.empty()) ir::op_fail("quantized_matmul", in, "x needs at least one dimension");
  if (w.shape.size() != 2) {
    ir::op_fail("quantized_matmul", in, "w must be u8 blocks of shape [N, row_bytes], got shape {}",
                shape_str(w.shape));
  }
  QMatmulDims d;
  d.k = values_per_row("quantized_matmul", in, w, type);
  d.n = w.shape[0];
  if (x.shape.back() != d.k) {
    ir::op_fail("quantized_matmul", in, "x has {} columns but the {} rows of w hold {} values each", x.shape.back(),
                quant::type_name(type), d.k);
  }
  return d;
}

Array qmatmul_reference(const Array& x, const Array& w, quant::GgmlType type, const QMatmulDims& d,
                        const TensorType& out_type) {
  const Array weights = decode(w, type, d.k).astype(DType::f64);
  const Array xs = x.astype(DType::f64);  // fresh and contiguous
  const int64_t rows = d.k == 0 ? x.numel() : xs.numel() / d.k;
  Array out = Array::zeros(DType::f64, {rows, d.n});
  const double* px = xs.data<const double>();
  const double* pw = weights.data<const double>();
  double* po = out.data<double>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < d.k; ++p) s += px[i * d.k + p] * pw[j * d.k + p];
      po[i * d.n + j] = s;
    }
  }
  return out.astype(out_type.dtype).reshape(out_type.shape);
}

// The product's dtype: x's, or the optional output_dtype (a floating type; 16-bit activations into an
// f32 product, as the tensor cores take them).
DType qmatmul_out_dtype(const std::vector<TensorType>& in, const Attrs& a) {
  if (!a.has("output_dtype")) return in[0].dtype;
  const std::string& name = a.get_string("output_dtype");
  DType out = DType::f32;
  try {
    out = parse_dtype(name);
  } catch (const Error&) {
    ir::op_fail("quantized_matmul", in, "output_dtype '{}' is not a dtype", name);
  }
  if (!is_floating(out)) ir::op_fail("quantized_matmul", in, "output_dtype must be floating, got {}", name);
  return out;
}

Shape qmatmul_out_shape(const TensorType& x, int64_t n) {
  Shape s = x.shape;
  s.back() = n;
  return s;
}

}  // namespace

Tensor dequantize(const Tensor& blocks, const std::string& type) {
  return ir::make_node1("dequantize", {blocks}, Attrs{{"type", type}});
}

Tensor quantized_matmul(const Tensor& x, const Tensor& w, const std::string& type) {
  return ir::make_node1("quantized_matmul", {x, w}, Attrs{{"type", type}});
}

Tensor quantized_matmul(const Tensor& x, const Tensor& w, const std::string& type, DType output_dtype) {
  if (output_dtype == x.dtype()) return quantized_matmul(x, w, type);
  return ir::make_node1("quantized_matmul", {x, w}, Attrs{{"type", type}, {"output_dtype", dtype_name(output_dtype)}});
}

Array quantize_array(const Array& values, const std::string& type) {
  const quant::GgmlType t = quant::parse_type(type);
  TESSERA_CHECK(values.rank() >= 1, "quantize_array: expected at least one dimension, got a scalar");
  const Array f = values.astype(DType::f32);
  const int64_t k = f.shape().back();
  const int64_t rows = k == 0 ? 0 : f.numel() / k;
  const std::vector<uint8_t> bytes = quant::quantize(t, f.data<const float>(), rows, k);
  Shape shape = f.shape();
  shape.back() = quant::row_bytes(t, k, "quantize_array");
  Array out = Array::empty(DType::u8, shape);
  if (!bytes.empty()) std::memcpy(out.raw_data(), bytes.data(), bytes.size());
  return out;
}

Array dequantize_array(const Array& blocks, const std::string& type) {
  const quant::GgmlType t = quant::parse_type(type);
  TESSERA_CHECK(blocks.dtype() == DType::u8 && blocks.rank() >= 1,
                "dequantize_array: expected u8 blocks with at least one dimension, got {}{}",
                dtype_name(blocks.dtype()), shape_str(blocks.shape()));
  return decode(blocks, t, quant::row_values(t, blocks.shape().back(), "dequantize_array"));
}

Tensor quantize_weights(const Array& values, const std::string& type, const std::string& name) {
  return Tensor::from_array(quantize_array(values, type), name);
}

void register_quant_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "dequantize",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"type", ir::AttrKind::String}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const quant::GgmlType type = block_type("dequantize", in, a);
        Shape shape = in[0].shape;
        const int64_t k = values_per_row("dequantize", in, in[0], type);
        shape.back() = k;
        return {{DType::f32, shape}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        return {decode(in[0], quant::parse_type(a.get_string("type")), out[0].shape.back())};
      },
  });
  r.add(ir::OpDef{
      .name = "quantized_matmul",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = {{"type", ir::AttrKind::String}, {"output_dtype", ir::AttrKind::String, false}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const QMatmulDims d = qmatmul_dims(in, block_type("quantized_matmul", in, a));
        return {{qmatmul_out_dtype(in, a), qmatmul_out_shape(in[0], d.n)}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const std::vector<TensorType> types{{in[0].dtype(), in[0].shape()}, {in[1].dtype(), in[1].shape()}};
        const quant::GgmlType type = block_type("quantized_matmul", types, a);
        return {qmatmul_reference(in[0], in[1], type, qmatmul_dims(types, type), out[0])};
      },
      // dx = g · W (W decoded), in the output's type, then as x; w is bytes and gets no gradient.
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const std::string& type = c.attrs().get_string("type");
        const DType out = c.outputs[0].dtype(), x = c.input(0).dtype();
        const Tensor w = cast(dequantize(Tensor(c.input(1)), type), out);
        const Tensor dx = matmul(Tensor(c.cotangent()), w);
        return {out == x ? dx : cast(dx, x), Value()};
      },
      // x · W^T in the output's type (x widened first when the output is wider).
      .decompose = [](const std::vector<Value>& in, const Attrs& a) -> std::vector<Value> {
        const DType out = qmatmul_out_dtype({in[0].type(), in[1].type()}, a);
        const Tensor w = cast(dequantize(Tensor(in[1]), a.get_string("type")), out);
        const Tensor x = in[0].dtype() == out ? Tensor(in[0]) : cast(Tensor(in[0]), out);
        return {matmul(x, transpose(w, 0, 1))};
      },
  });
}

}  // namespace tessera::ops
