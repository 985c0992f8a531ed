#pragma once
// Checks concrete input types against a model's declared inputs and binds each dim_param to a size.
#include <map>
#include <string>
#include <vector>

#include "tessera/ir/node.h"
#include "tessera/io/onnx/onnx_model.h"

namespace tessera::io::onnx {

// Fails naming the input and the dimension on a wrong count, dtype, rank or size, or on one dim_param
// given two sizes; returns every dim_param's size.
std::map<std::string, int64_t> bind_input_types(const OnnxModel& model, const std::vector<ir::TensorType>& types);

}  // namespace tessera::io::onnx
