#include "tessera/io/onnx/onnx_dtype.h"

#include <array>

#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_proto.h"

namespace tessera::io::onnx {

std::string onnx_type_name(int64_t elem_type) {
  if (elem_type >= 0 && elem_type <= INT32_MAX && pb::TensorProto_DataType_IsValid(static_cast<int>(elem_type))) {
    return pb::TensorProto_DataType_Name(static_cast<pb::TensorProto_DataType>(elem_type));
  }
  return "type " + std::to_string(elem_type);
}

std::optional<DType> dtype_of_onnx(int64_t elem_type) {
  switch (elem_type) {
    case pb::TensorProto::FLOAT: return DType::f32;
    case pb::TensorProto::DOUBLE: return DType::f64;
    case pb::TensorProto::FLOAT16: return DType::f16;
    case pb::TensorProto::BFLOAT16: return DType::bf16;
    case pb::TensorProto::INT8: return DType::i8;
    case pb::TensorProto::INT32: return DType::i32;
    case pb::TensorProto::INT64: return DType::i64;
    case pb::TensorProto::UINT8: return DType::u8;
    case pb::TensorProto::BOOL: return DType::boolean;
    default: return std::nullopt;
  }
}

DType require_dtype(int64_t elem_type, const std::string& where) {
  if (auto dt = dtype_of_onnx(elem_type)) return *dt;
  fail("{}: ONNX type {} has no Tessera dtype (supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, INT32, INT64, "
       "UINT8, BOOL)",
       where, onnx_type_name(elem_type));
}

int64_t onnx_type_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return pb::TensorProto::FLOAT;
    case DType::f64: return pb::TensorProto::DOUBLE;
    case DType::f16: return pb::TensorProto::FLOAT16;
    case DType::bf16: return pb::TensorProto::BFLOAT16;
    case DType::i8: return pb::TensorProto::INT8;
    case DType::i32: return pb::TensorProto::INT32;
    case DType::i64: return pb::TensorProto::INT64;
    case DType::u8: return pb::TensorProto::UINT8;
    case DType::boolean: return pb::TensorProto::BOOL;
  }
  fail("onnx_type_of: unknown dtype");
}

}  // namespace tessera::io::onnx
