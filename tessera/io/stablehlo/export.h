#pragma once
// Export a Tessera graph (or any traced function) as a StableHLO module in MLIR text, in the pretty
// form `jax.jit(f).lower(...).as_text()` prints: one `func.func public @main` whose arguments are the
// graph's inputs (then any constants too large to inline) and whose results are its outputs. XLA,
// IREE and other StableHLO consumers can compile the text as it is.
//
//   auto module = io::stablehlo::export_graph(graph, {.precision = io::stablehlo::Precision::Highest});
//   io::stablehlo::write_module(module, "out/model.mlir");
//
// Every registered op lowers directly or through its OpDef's decomposition; an op with neither fails
// the export with an error naming it. Export builds the whole text before anything is written, and
// files are written atomically, so a failed export never leaves a partial file.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/api/transforms.h"
#include "tessera/core/array.h"
#include "tessera/ir/graph.h"

namespace tessera::io::stablehlo {

enum class Precision {
  Default,  // what the compiler chooses (XLA on GPUs runs f32 products in TF32)
  Highest,  // precision = [HIGHEST, HIGHEST] on every dot_general and convolution
};

struct ExportOptions {
  Precision precision = Precision::Default;
  // Constants with more elements than this become extra @main arguments (after the graph's inputs)
  // instead of inline dense attributes; -1 inlines everything (large ones as hex bytes).
  int64_t max_inline_elements = 1024;
  std::string module_name;  // default: the graph's name
};

// One argument of @main.
struct Argument {
  enum class Kind { Input, Constant };
  Kind kind = Kind::Input;
  std::string name;  // the input's name, or the constant's name (or "constant_<i>")
  ir::TensorType type;
  Array value;  // for Kind::Constant: the data to pass in this argument's position
};

struct Module {
  std::string text;                 // the complete MLIR module
  std::vector<Argument> arguments;  // @main's arguments in order
  std::vector<ir::TensorType> results;
  // How each op of the graph was lowered: "direct" or "decomposed" (through OpDef::decompose).
  std::map<std::string, std::string> lowered_ops;
};

Module export_graph(const ir::Graph& graph, const ExportOptions& options = {});

// Traces `fn` on placeholders of the given types (tessera::trace) and exports the graph.
Module export_function(const MultiFn& fn, const std::vector<ir::TensorType>& input_types,
                       const ExportOptions& options = {}, const std::vector<std::string>& input_names = {});

// Writes module.text to `path` atomically (a temporary file renamed into place).
void write_module(const Module& module, const std::string& path);

// Whether an op can be exported, and how: "direct", "decomposed", or "" (not exportable).
std::string lowering_kind(const std::string& op);

}  // namespace tessera::io::stablehlo
