#pragma once
// ONNX element types (TensorProto.DataType) and the Tessera dtypes they map to. Types Tessera has no
// dtype for (strings, complex numbers, 16/32/64-bit unsigned and 16-bit signed integers) are named in
// the error, so a model using one says which type it needs.
#include <cstdint>
#include <optional>
#include <string>

#include "tessera/core/dtype.h"

namespace tessera::io::onnx {

// "FLOAT", "INT64", "STRING", ... (the enum's spelling in onnx.proto); "type 42" for unknown codes.
std::string onnx_type_name(int64_t elem_type);
// The Tessera dtype of an ONNX element type, or nothing when Tessera has none.
std::optional<DType> dtype_of_onnx(int64_t elem_type);
// As dtype_of_onnx, throwing "<where>: ONNX type UINT16 has no Tessera dtype (...)" when there is none.
DType require_dtype(int64_t elem_type, const std::string& where);
// The ONNX element type of a Tessera dtype.
int64_t onnx_type_of(DType dtype);

}  // namespace tessera::io::onnx
