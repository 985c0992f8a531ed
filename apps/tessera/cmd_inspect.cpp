// tessera inspect FILE: reads a graph in the IR text form and reports what is in it: a summary, the
// canonical text (--print), a Graphviz rendering (--dot) and a check of its invariants (--verify).
// A GGUF model file (recognised by its magic) is summarised instead: metadata, tensors, types and
// sizes; --tensor NAME shows one tensor and --dump OUT.npy writes its dequantized f32 values. An ONNX
// model (.onnx) shows its opsets, inputs, outputs, initializers and op histogram.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <unordered_map>

#include "command.h"
#include "file_io.h"
#include "tessera/core/atomic_file.h"
#include "tessera/core/printable.h"
#include "tessera/io/gguf/gguf_summary.h"
#include "tessera/io/safetensors_summary.h"
#include "tessera/io/npy.h"
#include "tessera/io/onnx/onnx_import.h"
#include "tessera/io/onnx/onnx_summary.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"

namespace tessera::cli {

namespace {

struct InspectOptions {
  std::string file;
  std::string dot_path;
  bool verify = false;
  bool print = false;
  std::string tensor;     // GGUF only
  std::string dump_path;  // GGUF only
};

bool is_gguf_file(const std::string& path) {
  return starts_with_bytes(path, "GGUF");
}

// safetensors has no magic: the name says so, or the image begins with an 8-byte header length and "{".
bool is_safetensors_file(const std::string& path) {
  if (path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) return true;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // opening a FIFO would wait for a writer
  std::ifstream in(path, std::ios::binary);
  char head[9] = {};
  return in.read(head, 9) && head[8] == '{' && head[6] == 0 && head[7] == 0;
}

int run_inspect_safetensors(const InspectOptions& options) {
  if (options.verify || options.print || !options.dot_path.empty()) {
    fail("{}: --dot, --verify and --print apply to IR graphs, not safetensors files", options.file);
  }
  if (!options.dump_path.empty() && options.tensor.empty()) fail("--dump needs --tensor NAME");
  const MappedFile file(options.file);
  const io::SafetensorsHeader header = io::read_safetensors_header(file.data(), file.size(), options.file);
  if (options.tensor.empty()) {
    std::cout << io::describe_safetensors(header, file.size());
    return kExitOk;
  }
  const auto it = header.tensors.find(options.tensor);
  if (it == header.tensors.end()) fail("{}: no tensor named '{}' ({} tensors)", options.file, options.tensor, header.tensors.size());
  const Array values = io::safetensors_tensor(file.data(), it->second);
  std::cout << io::describe_safetensors_tensor(it->first, it->second, values);
  if (!options.dump_path.empty()) {
    // NumPy has no bfloat16: 16-bit floats are written widened to f32.
    const bool widen = values.dtype() == DType::bf16 || values.dtype() == DType::f16;
    io::save_npy(options.dump_path, widen ? values.astype(DType::f32) : values);
    std::cout << "dump: wrote " << options.dump_path << "\n";
  }
  return kExitOk;
}

int run_inspect_gguf(const InspectOptions& options) {
  if (options.verify || options.print || !options.dot_path.empty()) {
    fail("{}: --dot, --verify and --print apply to IR graphs, not GGUF files", options.file);
  }
  if (!options.dump_path.empty() && options.tensor.empty()) fail("--dump needs --tensor NAME");
  const io::gguf::Reader reader = io::gguf::Reader::open(options.file);
  if (options.tensor.empty()) {
    std::cout << io::gguf::describe_file(reader);
    return kExitOk;
  }
  const io::gguf::TensorInfo& info = reader.tensor(options.tensor);
  std::cout << io::gguf::describe_tensor(reader, info);
  if (!options.dump_path.empty()) {
    io::save_npy(options.dump_path, reader.dequantize(info));
    std::cout << "dump: wrote " << options.dump_path << " (f32 " << shape_str(info.shape()) << ")\n";
  }
  return kExitOk;
}

// Numbers values exactly as print_graph does (inputs first, then node outputs in order), so that the
// summary and the text agree on %N.
std::unordered_map<ir::Value, int, ir::ValueHash> number_values(const ir::Graph& graph) {
  std::unordered_map<ir::Value, int, ir::ValueHash> number;
  int next = 0;
  for (const ir::Value& v : graph.inputs()) number[v] = next++;
  for (const ir::NodePtr& node : graph.nodes()) {
    for (int i = 0; i < node->num_outputs(); ++i) number[ir::Value(node, i)] = next++;
  }
  return number;
}

// Names as printed: escaped and cut short, so that one long name cannot widen every line.
constexpr size_t kNameColumn = 64;

std::string column_text(const std::string& name) {
  return printable(name, kNameColumn);
}

std::string input_name(const ir::Value& v, int number) {
  if (v.node()->op_name() == "input") return column_text(v.node()->attrs().get_string("name"));
  return fmt::format("v{}", number);
}

std::string summarize(const ir::Graph& graph) {
  const auto number = number_values(graph);
  std::string out = fmt::format("graph @{}\n", graph.name());

  out += fmt::format("inputs ({}):\n", graph.inputs().size());
  size_t name_width = 0;
  for (const ir::Value& v : graph.inputs()) name_width = std::max(name_width, input_name(v, number.at(v)).size());
  for (const ir::Value& v : graph.inputs()) {
    const int n = number.at(v);
    out += fmt::format("  %{:<4} {:<{}}  {}\n", n, input_name(v, n), name_width, ir::type_str(v.type()));
  }

  out += fmt::format("outputs ({}):\n", graph.outputs().size());
  for (const ir::Value& v : graph.outputs()) {
    out += fmt::format("  %{:<4} {:<16} from {}\n", number.at(v), ir::type_str(v.type()), v.node()->op_name());
  }

  std::map<std::string, int> per_op;
  for (const ir::NodePtr& node : graph.nodes()) ++per_op[node->op_name()];
  size_t op_width = 0;
  for (const auto& [op, count] : per_op) op_width = std::max(op_width, op.size());
  out += fmt::format("nodes ({}):\n", graph.nodes().size());
  for (const auto& [op, count] : per_op) out += fmt::format("  {:<{}}  {}\n", op, op_width, count);

  // Constants hold the graph's data; named ones are parameters (Tensor::from_array with a name).
  size_t constants = 0, bytes = 0;
  int64_t elements = 0;
  std::vector<std::pair<std::string, const Array*>> named;
  for (const ir::NodePtr& node : graph.nodes()) {
    if (node->op_name() != "constant") continue;
    const Array& value = node->attrs().get_tensor("value");
    ++constants;
    elements += value.numel();
    bytes += value.nbytes();
    if (node->attrs().has("name")) named.emplace_back(column_text(node->attrs().get_string("name")), &value);
  }
  out += fmt::format("constants: {} ({} named), {} elements, {} bytes\n", constants, named.size(), elements, bytes);
  constexpr size_t kMaxListed = 32;
  size_t param_width = 0;
  for (size_t i = 0; i < named.size() && i < kMaxListed; ++i) param_width = std::max(param_width, named[i].first.size());
  for (size_t i = 0; i < named.size() && i < kMaxListed; ++i) {
    const Array& value = *named[i].second;
    out += fmt::format("  {:<{}}  {:<16} {} bytes\n", named[i].first, param_width,
                       ir::type_str({value.dtype(), value.shape()}), value.nbytes());
  }
  if (named.size() > kMaxListed) out += fmt::format("  ... and {} more\n", named.size() - kMaxListed);
  return out;
}

// The summary, --verify, --dot and --print of a graph (parsed from IR text or imported from ONNX).
int report_graph(const ir::Graph& graph, const InspectOptions& options) {
  if (options.verify) {
    try {
      ir::verify(graph);
    } catch (const Error& e) {
      fail("{}: verification failed: {}", options.file, e.what());
    }
  }
  if (!options.dot_path.empty()) write_file_atomic(options.dot_path, ir::graph_to_dot(graph));
  // --print replaces the summary so that the canonical text can be piped on.
  if (options.print) {
    std::cout << ir::print_graph(graph);
  } else if (options.dot_path != "-") {
    std::cout << summarize(graph);
    if (options.verify) std::cout << "verify: ok\n";
    if (!options.dot_path.empty()) std::cout << "dot: wrote " << options.dot_path << "\n";
  }
  return kExitOk;
}

bool is_onnx_file(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

// An ONNX model: its summary; with --print, --dot or --verify, the graph imported for its declared
// input types (a model with dynamic dimensions says which; `tessera run` binds them from inputs).
int run_inspect_onnx(const InspectOptions& options) {
  if (!options.tensor.empty() || !options.dump_path.empty()) {
    fail("{}: --tensor and --dump apply to GGUF and safetensors files, not ONNX models", options.file);
  }
  const io::onnx::OnnxModel model = io::onnx::load_onnx_model(options.file);
  if (!options.print && !options.verify && options.dot_path.empty()) {
    std::cout << io::onnx::describe_onnx_model(model);
    return kExitOk;
  }
  return report_graph(io::onnx::import_onnx(model).graph, options);
}

int run_inspect(const InspectOptions& options) {
  if (options.file != "-" && is_safetensors_file(options.file)) return run_inspect_safetensors(options);
  if (options.file != "-" && is_onnx_file(options.file)) return run_inspect_onnx(options);
  // --tensor/--dump only make sense for model files, so the GGUF reader explains what is wrong with the file.
  if (is_gguf_file(options.file) || !options.tensor.empty() || !options.dump_path.empty()) {
    return run_inspect_gguf(options);
  }
  const std::string text = read_text_file(options.file);
  ir::Graph graph;
  try {
    graph = ir::parse_graph(text);
  } catch (const Error& e) {
    fail("{}: {}", options.file == "-" ? "<stdin>" : options.file, e.what());
  }
  return report_graph(graph, options);
}

}  // namespace

Command add_inspect_command(CLI::App& root) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* app = root.add_subcommand("inspect", "Summarise a graph in the IR text form (.tsr), a GGUF model, a safetensors file or an ONNX model");
  app->add_option("FILE", options->file, "Graph in the IR text form ('-' reads standard input), a .gguf, .safetensors or .onnx file")
      ->required();
  app->add_option("--dot", options->dot_path, "Also write the graph as Graphviz DOT to this file ('-': stdout)")
      ->type_name("OUT.dot");
  app->add_flag("--verify", options->verify, "Check the graph's invariants (fails with exit code 1 if broken)");
  app->add_flag("--print", options->print, "Print the canonical IR text instead of the summary");
  app->add_option("--tensor", options->tensor, "GGUF/safetensors: show this tensor (type, shape, offset, value statistics)")
      ->type_name("NAME");
  app->add_option("--dump", options->dump_path, "GGUF/safetensors: also write the --tensor's values as .npy (decoded to f32)")
      ->type_name("OUT.npy");
  return {app, [options] { return run_inspect(*options); }};
}

}  // namespace tessera::cli
