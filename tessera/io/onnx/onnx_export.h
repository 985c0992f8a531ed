#pragma once
// Export a Tessera graph as an ONNX model (opset 17, IR version 8) that onnx.checker accepts and ONNX
// Runtime runs. Graph inputs become the model's inputs (or initializers, for the ones given values in
// ExportOptions::initializers), constants become initializers, outputs carry the names given.
//
//   io::onnx::ExportOptions options;
//   options.output_names = {"logits"};
//   io::onnx::export_onnx(graph, "out/model.onnx", options);
//
// Every op lowers directly (one file per op family, export_*.cpp) or through its OpDef's decomposition;
// an op with neither fails naming the op and the node. The whole model is built in memory first and
// files are written atomically, so a failed export never leaves a partial file.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/graph.h"

namespace tessera::io::onnx {

/// What to export besides the graph itself.
struct ExportOptions {
  /// The ONNX graph's name; empty takes the Tessera graph's.
  std::string graph_name;
  /// Names of the graph's outputs, in order; missing ones are "output_<i>".
  std::vector<std::string> output_names;
  /// Graph inputs (by name) to store as initializers holding these values instead of model inputs:
  /// a forward model's weights, so that only the data remains an input.
  std::map<std::string, Array> initializers;
  /// Initializers of at least this many bytes go to an external data file next to the model
  /// (ONNX's external data, needed above protobuf's 2 GiB); -1 keeps everything inside the model.
  int64_t external_data_bytes = -1;
  /// The external data file's name, relative to the model's folder; empty: "<model file>.data".
  std::string external_data_file;
};

/// An exported model in memory, ready to be written.
struct OnnxExport {
  std::string model;                           ///< the serialised ModelProto
  std::string external_data_file;              ///< the external data file's name ("" when none)
  std::string external_data;                   ///< its bytes
  std::vector<std::string> input_names;        ///< the model's inputs, in order
  std::vector<ir::TensorType> input_types;     ///< their types
  std::vector<std::string> output_names;       ///< the model's outputs, in order
  std::vector<ir::TensorType> output_types;    ///< their types
  std::vector<std::string> initializer_names;  ///< every initializer, in order
  /// How each op of the graph was exported: "direct" or "decomposed" (through OpDef::decompose).
  std::map<std::string, std::string> lowered_ops;
};

/// Builds the model in memory; fails (writing nothing) on an op without an ONNX form.
OnnxExport export_onnx_model(const ir::Graph& graph, const ExportOptions& options = {});

/// Writes an exported model to `path` (and its external data file beside it), each file atomically.
/// Returns the paths written, the model last.
std::vector<std::string> write_onnx(const OnnxExport& exported, const std::string& path);

/// Exports `graph` and writes it to `path`: export_onnx_model, then write_onnx.
OnnxExport export_onnx(const ir::Graph& graph, const std::string& path, const ExportOptions& options = {});

/// How an op exports: "direct", "decomposed" (its OpDef's decomposition, whose ops must export), or ""
/// (no ONNX form). A direct lowering may still decompose some instances (conv_weight_grad with groups).
std::string onnx_lowering_kind(const std::string& op);

/// Registered ops that have no ONNX form (neither a lowering nor a decomposition), sorted.
std::vector<std::string> ops_without_onnx_form();

/// The ONNX opset the export targets.
inline constexpr int64_t kOnnxExportOpset = 17;

}  // namespace tessera::io::onnx
