#pragma once
// ONNX model -> Tessera graph. The graph is built for concrete input types: named dynamic dimensions
// (dim_param) take the sizes the caller's inputs have, consistently across inputs, and fixed ones must
// match. Initializers become constants. An op, attribute value or dtype the importer lacks fails
// with an error naming the node, the op, its opset and what is missing.
#include <map>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/graph.h"
#include "tessera/io/onnx/onnx_model.h"

namespace tessera::io::onnx {

struct ImportedGraph {
  ir::Graph graph;                       // inputs: the model's non-initializer inputs, in order
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::map<std::string, int64_t> dims;   // each dim_param's bound size
};

// Builds the graph for inputs of these types (one per OnnxModel::inputs() entry).
ImportedGraph import_onnx(const OnnxModel& model, const std::vector<ir::TensorType>& input_types);
// For models whose inputs are fully static (fails naming the first dynamic dimension).
ImportedGraph import_onnx(const OnnxModel& model);
// The declared types with dim_params bound from `dims`; fails naming a dimension it cannot fix.
std::vector<ir::TensorType> declared_input_types(const OnnxModel& model,
                                                 const std::map<std::string, int64_t>& dims = {});

}  // namespace tessera::io::onnx
