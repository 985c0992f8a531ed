#pragma once
// ONNX tensors (TensorProto) as Arrays: the .pb files of ONNX's test data (test_data_set_*/input_0.pb)
// and, through the importer, initializers and Constant values. Every size is checked before a byte is
// read: the data's byte size must match the tensor's dtype and shape.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/array.h"

namespace tessera::io::onnx {

// A tensor serialized on its own (a TensorProto message). External data is refused here: it is only
// meaningful beside a model, whose folder bounds the paths.
Array load_onnx_tensor(const std::string& path);
Array parse_onnx_tensor(const uint8_t* data, size_t size, const std::string& what);

}  // namespace tessera::io::onnx
