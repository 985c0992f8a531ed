#pragma once
// TensorProto -> Array for the importer's files: raw_data, the typed repeated fields, or external data
// (a file named relative to the model's folder, which the path may not leave).
#include <string>

#include "tessera/core/array.h"
#include "tessera/io/onnx/onnx_proto.h"

namespace tessera::io::onnx {

// `what` names the tensor in errors ("initializer 'fc.weight'"). `model_dir` is the folder external
// data is read from; empty refuses external data (a model parsed from memory).
Array array_from_tensor_proto(const pb::TensorProto& tensor, const std::string& what, const std::string& model_dir);

// Checks what a stored tensor can be checked for without reading external files: a known data type,
// valid dimensions, and raw_data or the typed field holding exactly the bytes that the dtype and shape
// need. Tensors of types Tessera lacks are only checked for their dimensions (import refuses them).
void check_stored_size(const pb::TensorProto& tensor, const std::string& what);

// The shape of a TensorProto, each dimension checked (non-negative, element count within int64).
Shape tensor_proto_shape(const pb::TensorProto& tensor, const std::string& what);

}  // namespace tessera::io::onnx
