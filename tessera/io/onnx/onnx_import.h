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
  ir::Graph graph;                       // inputs: the model's inputs that were not fixed, in order
  std::vector<std::string> input_names;
  std::vector<size_t> input_indices;     // each graph input's place among the model's inputs
  std::vector<std::string> fixed_inputs; // inputs whose values decided shapes and became constants
  std::vector<std::string> output_names;
  std::map<std::string, int64_t> dims;   // each dim_param's bound size
};

// Builds the graph for inputs of these types (one per OnnxModel::inputs() entry). Tessera's shapes are
// static, so a value that decides a shape (Reshape's shape, Slice's starts, Resize's sizes, ...) must be
// known at import: computed from initializers and constants, or, when it comes from a model input and
// `input_values` holds that input's data (an undefined Array where unknown), fixed to that data: the
// input then becomes a constant of the graph and is listed in fixed_inputs, not among its inputs.
ImportedGraph import_onnx(const OnnxModel& model, const std::vector<ir::TensorType>& input_types,
                          const std::vector<Array>& input_values = {});
// The graph for these concrete inputs (their types, and their values where shapes depend on them).
ImportedGraph import_onnx_for(const OnnxModel& model, const std::vector<Array>& inputs);
// The arrays to run the graph on: `inputs` (one per model input) without the fixed ones.
std::vector<Array> graph_inputs(const ImportedGraph& imported, const std::vector<Array>& inputs);
// For models whose inputs are fully static (fails naming the first dynamic dimension).
ImportedGraph import_onnx(const OnnxModel& model);
// The declared types with dim_params bound from `dims`; fails naming a dimension it cannot fix.
std::vector<ir::TensorType> declared_input_types(const OnnxModel& model,
                                                 const std::map<std::string, int64_t>& dims = {});

}  // namespace tessera::io::onnx
