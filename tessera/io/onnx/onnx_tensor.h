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
// `uint16_as_bfloat16` reads UINT16 data as the bits of bfloat16 values: ONNX's own test data stores
// bfloat16 tensors that way (NumPy has no bfloat16), for models that declare BFLOAT16.
Array load_onnx_tensor(const std::string& path, bool uint16_as_bfloat16 = false);
Array parse_onnx_tensor(const uint8_t* data, size_t size, const std::string& what, bool uint16_as_bfloat16 = false);

}  // namespace tessera::io::onnx
