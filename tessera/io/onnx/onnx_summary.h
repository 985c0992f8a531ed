#pragma once
// What `tessera inspect MODEL.onnx` prints: producer, IR version, opsets, the inputs and outputs with
// their types (dynamic dimensions by name), the initializers with their sizes and the op histogram.
// Names from the file are escaped and cut (core/printable.h).
#include <string>

#include "tessera/io/onnx/onnx_model.h"

namespace tessera::io::onnx {

std::string describe_onnx_model(const OnnxModel& model);

}  // namespace tessera::io::onnx
