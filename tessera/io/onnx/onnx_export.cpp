// The export driver: graph inputs become model inputs (or initializers), each node lowers through its
// rule or, lacking one, through its OpDef's decomposition (exported in place), constants become
// initializers, and the outputs are Identity nodes into their names. Large initializers can move to
// an external data file. Nothing is written until the whole model has been built.
#include "tessera/io/onnx/onnx_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "tessera/core/error.h"
#include "tessera/io/atomic_file.h"
#include "tessera/io/onnx/export_lower.h"
#include "tessera/ir/op_def.h"

namespace tessera::io::onnx {

// --- the lowering table ------------------------------------------------------------------------------

void LowerContext::fail(const std::string& message) const {
  std::vector<ir::TensorType> types;
  for (const ir::Value& v : node.inputs()) types.push_back(v.type());
  ::tessera::fail("onnx export: {}: {}", ir::describe_op(node.op_name(), types), message);
}

const LoweringTable& onnx_lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t("onnx export");
    add_elementwise_exports(t);
    add_reduce_exports(t);
    add_shape_exports(t);
    add_index_exports(t);
    add_linalg_exports(t);
    add_conv_exports(t);
    add_pool_exports(t);
    add_creation_exports(t);
    return t;
  }();
  return table;
}

std::vector<int64_t> node_axes(const LowerContext& c) {
  return normalize_axes(c.attrs().get_ints("axes"), c.node.input(0).rank(), c.node.op_name().c_str());
}

DType widened(DType dt) {
  return dt == DType::f16 || dt == DType::bf16 ? DType::f32 : dt;
}

std::string onnx_lowering_kind(const std::string& op) {
  if (op == "input" || op == "constant") return "direct";
  if (onnx_lowerings().find(op)) return "direct";
  const ir::OpDef* def = ir::OpRegistry::instance().find(op);
  return def && def->decompose ? "decomposed" : "";
}

std::vector<std::string> ops_without_onnx_form() {
  std::vector<std::string> out;
  for (const std::string& op : ir::OpRegistry::instance().names()) {
    if (onnx_lowering_kind(op).empty()) out.push_back(op);
  }
  return out;
}

// --- the driver ----------------------------------------------------------------------------------------

namespace {

using Env = std::unordered_map<ir::Value, OVal, ir::ValueHash>;

std::string describe_tessera_node(const ir::Node& node) {
  std::vector<ir::TensorType> types;
  for (const ir::Value& v : node.inputs()) types.push_back(v.type());
  std::string s = fmt::format("node {} ({})", node.id(), ir::describe_op(node.op_name(), types));
  if (!node.origin().empty()) s += fmt::format(" from {}", node.origin());
  return s;
}

class Exporter {
 public:
  Exporter(const ExportOptions& options, pb::GraphProto& g) : options_(options), b_(g) {}

  void run(const ir::Graph& graph, OnnxExport& out) {
    Env env;
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      const ir::Value& v = graph.inputs()[i];
      const ir::Node& n = *v.node();
      const std::string name = n.op_name() == "input" ? n.attrs().get_string("name") : fmt::format("input_{}", i);
      b_.claim(name);
      auto init = options_.initializers.find(name);
      if (init != options_.initializers.end()) {
        const Array& value = init->second;
        TESSERA_CHECK(value.dtype() == v.dtype() && value.shape() == v.shape(),
                      "onnx export: initializer '{}' is {} but the graph input is {}", name,
                      ir::type_str({value.dtype(), value.shape()}), ir::type_str(v.type()));
        fill_tensor(*b_.graph().add_initializer(), name, value);
      } else {
        set_value_info(*b_.graph().add_input(), name, v.dtype(), v.shape());
        out.input_names.push_back(name);
        out.input_types.push_back(v.type());
      }
      env[v] = OVal{name, v.dtype(), v.shape()};
    }
    for (const auto& entry : options_.initializers) {
      const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture a structured binding
      const bool used = std::any_of(graph.inputs().begin(), graph.inputs().end(), [&](const ir::Value& v) {
        return v.node()->op_name() == "input" && v.node()->attrs().get_string("name") == name;
      });
      TESSERA_CHECK(used, "onnx export: initializer '{}' names no input of graph '{}'", name, graph.name());
    }
    for (const ir::NodePtr& node : graph.nodes()) lower_node(node, env, 0);

    // Each output is an Identity into its reserved name, so a value may be an output twice, or an
    // input and an output.
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
      const ir::Value& v = graph.outputs()[i];
      const std::string& name = output_names_[i];
      const OVal o = b_.identity(env.at(v), name);
      set_value_info(*b_.graph().add_output(), name, o.dtype, o.shape);
      out.output_names.push_back(name);
      out.output_types.push_back(v.type());
    }
    out.lowered_ops = lowered_;
  }

  // Outputs' names are reserved before any node is lowered, so that no internal value takes one.
  void reserve_outputs(const ir::Graph& graph) {
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
      std::string name = i < options_.output_names.size() ? options_.output_names[i] : fmt::format("output_{}", i);
      b_.claim(name);
      output_names_.push_back(std::move(name));
    }
  }

 private:
  void lower_node(const ir::NodePtr& ptr, Env& env, int depth) {
    const ir::Node& node = *ptr;
    const std::string& op = node.op_name();
    if (op == "constant") {
      const std::string name = node.attrs().has("name") ? node.attrs().get_string("name") : std::string();
      env[ir::Value(ptr, 0)] = b_.constant(node.attrs().get_tensor("value"), name.empty() ? "const" : name);
      lowered_.emplace("constant", "direct");
      return;
    }
    if (op == "input") {
      ::tessera::fail("onnx export: input '{}' is used by the graph but is not one of its inputs",
                      node.attrs().get_string("name"));
    }
    std::vector<OVal> in;
    for (const ir::Value& v : node.inputs()) in.push_back(env.at(v));
    std::vector<OVal> outs;
    if (const LowerFn* fn = onnx_lowerings().find(op)) {
      LowerContext c{b_, node, in};
      outs = (*fn)(c);
      if (!outs.empty()) lowered_[op] = "direct";
    }
    if (outs.empty()) {
      if (!node.op().decompose) {
        ::tessera::fail("onnx export: {}: the op '{}' has no ONNX form (no lowering and no decomposition)",
                        describe_tessera_node(node), op);
      }
      outs = lower_decomposed(node, in, depth);
      lowered_.emplace(op, "decomposed");
    }
    check_results(node, outs);
    for (size_t i = 0; i < outs.size(); ++i) env[ir::Value(ptr, static_cast<int>(i))] = outs[i];
  }

  // The decomposition is built on placeholders standing for the node's inputs and exported in place.
  std::vector<OVal> lower_decomposed(const ir::Node& node, const std::vector<OVal>& in, int depth) {
    TESSERA_CHECK(depth < 16, "onnx export: op '{}' decomposes without end", node.op_name());
    std::vector<ir::Value> placeholders;
    for (size_t i = 0; i < node.inputs().size(); ++i) {
      placeholders.push_back(ir::make_input(fmt::format("{}_in{}", node.op_name(), i), node.input(i).type()));
    }
    const std::vector<ir::Value> outs = node.op().decompose(placeholders, node.attrs());
    const ir::Graph sub = ir::Graph::build(placeholders, outs, node.op_name());
    Env env;
    for (size_t i = 0; i < placeholders.size(); ++i) env[placeholders[i]] = in[i];
    for (const ir::NodePtr& n : sub.nodes()) {
      TESSERA_CHECK(n->op_name() != node.op_name() || depth < 15, "onnx export: the decomposition of '{}' uses it again",
                    node.op_name());
      lower_node(n, env, depth + 1);
    }
    std::vector<OVal> result;
    for (const ir::Value& v : outs) result.push_back(env.at(v));
    return result;
  }

  void check_results(const ir::Node& node, const std::vector<OVal>& outs) const {
    TESSERA_CHECK(static_cast<int>(outs.size()) == node.num_outputs(),
                  "onnx export: the lowering of '{}' gave {} results for {} outputs", node.op_name(), outs.size(),
                  node.num_outputs());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::TensorType& want = node.output_types()[i];
      TESSERA_CHECK(outs[i].dtype == want.dtype && outs[i].shape == want.shape,
                    "onnx export: the lowering of '{}' gave {} for output {} of type {}", node.op_name(),
                    ir::type_str({outs[i].dtype, outs[i].shape}), i, ir::type_str(want));
    }
  }

  const ExportOptions& options_;
  GraphBuilder b_;
  std::vector<std::string> output_names_;
  std::map<std::string, std::string> lowered_;
};

// Moves initializers of at least `threshold` bytes into `data` (ONNX external data, 64-byte aligned).
void externalise(pb::GraphProto& g, int64_t threshold, const std::string& file, std::string& data) {
  for (pb::TensorProto& t : *g.mutable_initializer()) {
    if (static_cast<int64_t>(t.raw_data().size()) < threshold || t.raw_data().empty()) continue;
    while (data.size() % 64 != 0) data.push_back('\0');
    const size_t offset = data.size();
    data += t.raw_data();
    t.clear_raw_data();
    t.set_data_location(pb::TensorProto::EXTERNAL);
    auto add = [&t](const std::string& key, const std::string& value) {
      pb::StringStringEntryProto* e = t.add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add("location", file);
    add("offset", std::to_string(offset));
    add("length", std::to_string(data.size() - offset));
  }
}

}  // namespace

OnnxExport export_onnx_model(const ir::Graph& graph, const ExportOptions& options) {
  pb::ModelProto model;
  model.set_ir_version(8);  // the IR version of opset 17
  model.set_producer_name("tessera");
  model.set_producer_version(TESSERA_VERSION);
  pb::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxExportOpset);
  pb::GraphProto& g = *model.mutable_graph();
  g.set_name(options.graph_name.empty() ? (graph.name().empty() ? "tessera" : graph.name()) : options.graph_name);

  OnnxExport out;
  Exporter exporter(options, g);
  exporter.reserve_outputs(graph);
  exporter.run(graph, out);
  for (const pb::TensorProto& t : g.initializer()) out.initializer_names.push_back(t.name());

  if (options.external_data_bytes >= 0) {
    TESSERA_CHECK(!options.external_data_file.empty(),
                  "onnx export: external data needs a file name (ExportOptions::external_data_file)");
    const std::filesystem::path file(options.external_data_file);
    TESSERA_CHECK(file.is_relative() && file.filename() == file,
                  "onnx export: the external data file '{}' must be a plain file name (it lives beside the model)",
                  options.external_data_file);
    externalise(g, options.external_data_bytes, options.external_data_file, out.external_data);
    if (!out.external_data.empty()) out.external_data_file = options.external_data_file;
  }
  TESSERA_CHECK(model.ByteSizeLong() < (size_t{1} << 31),
                "onnx export: the model is {} bytes, over protobuf's 2 GiB; set external_data_bytes to store the "
                "weights beside it",
                model.ByteSizeLong());
  TESSERA_CHECK(model.SerializeToString(&out.model), "onnx export: serialising the model failed");
  return out;
}

std::vector<std::string> write_onnx(const OnnxExport& exported, const std::string& path) {
  std::vector<std::string> written;
  if (!exported.external_data_file.empty()) {
    const std::string data_path =
        (std::filesystem::path(path).parent_path() / exported.external_data_file).string();
    write_file_atomic(data_path, exported.external_data);
    written.push_back(data_path);
  }
  write_file_atomic(path, exported.model);
  written.push_back(path);
  return written;
}

OnnxExport export_onnx(const ir::Graph& graph, const std::string& path, const ExportOptions& options) {
  ExportOptions o = options;
  if (o.external_data_bytes >= 0 && o.external_data_file.empty()) {
    o.external_data_file = std::filesystem::path(path).filename().string() + ".data";
  }
  OnnxExport exported = export_onnx_model(graph, o);
  write_onnx(exported, path);
  return exported;
}

}  // namespace tessera::io::onnx
