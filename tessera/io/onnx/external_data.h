#pragma once
// External data of an ONNX tensor (data_location = EXTERNAL): `location` is a file relative to the
// model's folder, `offset` and `length` select its bytes. The resolved path (symbolic links followed)
// must stay inside the folder, so a model cannot make the reader open /etc/passwd or ../secret.
#include <cstdint>
#include <string>

#include "tessera/io/onnx/onnx_proto.h"

namespace tessera::io::onnx {

// The tensor's bytes, exactly `expected_bytes` of them (the dtype's size times the element count).
std::string read_external_data(const pb::TensorProto& tensor, const std::string& what, const std::string& model_dir,
                               uint64_t expected_bytes);

}  // namespace tessera::io::onnx
