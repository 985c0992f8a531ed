#include "tessera/io/onnx/onnx_import.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/onnx/input_binding.h"
#include "tessera/io/onnx/model_impl.h"
#include "tessera/io/onnx/onnx_dtype.h"
#include "tessera/io/onnx/tensor_proto.h"
#include "tessera/io/onnx/translation_table.h"

namespace tessera::io::onnx {

namespace {

// Computes a value that depends on no graph input (on the reference backend, the oracle) and turns
// its slot into a constant leaf, so that later readers of the data do not compute it again.
// Values needed at import are shapes, axes and pads; a subexpression that would take more than this
// to compute is refused rather than allocated.
constexpr int64_t kMaxConstantBytes = int64_t{1} << 30;

Array evaluate_constant(Slot& slot) {
  if (slot.tensor.op_name() == "constant" || slot.tensor.value().node()->has_data()) return slot.tensor.array();
  const ir::Graph graph = ir::Graph::build({}, {slot.tensor.value()}, "onnx_constant");
  int64_t bytes = 0;
  for (const auto& node : graph.nodes()) {
    for (const auto& t : node->output_types()) {
      const int64_t size = static_cast<int64_t>(dtype_size(t.dtype));
      bytes += t.numel() > kMaxConstantBytes / size ? kMaxConstantBytes + 1 : t.numel() * size;
      bytes = std::min(bytes, kMaxConstantBytes + 1);
    }
  }
  TESSERA_CHECK(bytes <= kMaxConstantBytes, "computing {} at import would take {} bytes (at most {})",
                type_str(slot.tensor.type()), bytes, kMaxConstantBytes);
  Array value = backends::reference_backend().compile(graph)->run({}).at(0);
  slot.tensor = Tensor::from_array(value);
  return value;
}

int64_t select_version(const OpTranslation& entry, int64_t opset) {
  int64_t chosen = 0;
  for (int64_t v : entry.versions) {
    if (v <= opset) chosen = v;
  }
  return chosen;
}

class Importer {
 public:
  explicit Importer(const OnnxModel& model) : model_(model), graph_(model.impl().proto.graph()) {}

  // `values` (empty, or one per input, undefined where unknown) are the inputs' data when the caller
  // has it; an input whose value some translation needs at import is then fixed to it (a constant),
  // and the import starts over with it fixed.
  ImportedGraph run(const std::vector<ir::TensorType>& input_types, const std::vector<Array>& values) {
    TESSERA_CHECK(values.empty() || values.size() == input_types.size(),
                  "{}: {} input values given for {} inputs", model_.source(), values.size(), input_types.size());
    std::vector<bool> fixed(input_types.size(), false);
    for (;;) {
      try {
        return build(input_types, values, fixed);
      } catch (const SpecializeInputs& needed) {
        for (int i : needed.inputs) fixed[static_cast<size_t>(i)] = true;
      }
    }
  }

 private:
  // Thrown (not a tessera::Error, so translations pass it on) when a value needed at import depends
  // only on inputs whose values are known.
  struct SpecializeInputs {
    std::vector<int> inputs;
  };

  ImportedGraph build(const std::vector<ir::TensorType>& input_types, const std::vector<Array>& values,
                      const std::vector<bool>& fixed) {
    slots_.clear();
    depends_.clear();
    ImportedGraph out;
    out.dims = bind_input_types(model_, input_types);
    const int64_t opset = check_opset();
    for (const auto& init : graph_.initializer()) {
      const std::string what = model_.source() + ": initializer " + printable_quoted(init.name());
      slots_[init.name()] = Slot{Tensor::from_array(array_from_tensor_proto(init, what, model_.folder()), init.name()),
                                 {}};
    }
    std::vector<ir::Value> inputs;
    for (size_t i = 0; i < model_.inputs().size(); ++i) {
      const std::string& name = model_.inputs()[i].name;
      if (fixed[i]) {
        TESSERA_CHECK(values[i].dtype() == input_types[i].dtype && values[i].shape() == input_types[i].shape,
                      "{}: the value given for input {} does not have its type", model_.source(),
                      printable_quoted(name));
        slots_[name] = Slot{Tensor::from_array(values[i], name), {}};
        out.fixed_inputs.push_back(name);
        continue;
      }
      Tensor t = Tensor::placeholder(name, input_types[i].dtype, input_types[i].shape);
      slots_[name] = Slot{t, {static_cast<int>(i)}};
      depends_[t.value().node().get()] = {static_cast<int>(i)};
      inputs.push_back(t.value());
      out.input_names.push_back(name);
      out.input_indices.push_back(i);
    }
    auto evaluate = [&](Slot& slot) -> std::optional<Array> {
      if (slot.constant()) return evaluate_constant(slot);
      const bool known = !values.empty() && std::all_of(slot.graph_inputs.begin(), slot.graph_inputs.end(), [&](int i) {
        return values[static_cast<size_t>(i)].defined();
      });
      if (known) throw SpecializeInputs{slot.graph_inputs};
      return std::nullopt;
    };
    for (int index : model_.impl().node_order) translate(graph_.node(index), index, opset, evaluate);
    std::vector<ir::Value> outputs;
    for (const OnnxValueInfo& o : model_.outputs()) {
      const Slot& slot = slots_.at(o.name);
      check_declared_type(o, slot.tensor);
      outputs.push_back(slot.tensor.value());
      out.output_names.push_back(o.name);
    }
    out.graph = ir::Graph::build(std::move(inputs), std::move(outputs), sanitize(model_.graph_name()));
    return out;
  }

  int64_t check_opset() const {
    const int64_t opset = model_.opset("").value_or(1);
    TESSERA_CHECK(opset <= kNewestOpset,
                  "{}: the model imports opset {}, newer than the newest this importer knows ({}); its operators "
                  "may have changed meaning",
                  model_.source(), opset, kNewestOpset);
    return opset;
  }

  void translate(const pb::NodeProto& node, int index, int64_t opset, const NodeContext::Evaluate& evaluate) {
    const std::string where = describe_node(node, index);
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    TESSERA_CHECK(default_domain, "{}: {}: operators of domain {} are not supported (only the default ai.onnx)",
                  model_.source(), where, printable_quoted(node.domain()));
    const OpTranslation* entry = translations().find(node.op_type());
    TESSERA_CHECK(entry != nullptr, "{}: {}, opset {}: ONNX operator {} is not supported by the importer",
                  model_.source(), where, opset, printable(node.op_type(), 60));
    const int64_t version = select_version(*entry, opset);
    TESSERA_CHECK(version != 0, "{}: {}, opset {}: {} first appears in opset {}", model_.source(), where, opset,
                  node.op_type(), entry->versions.front());
    TESSERA_CHECK(version >= entry->oldest_supported,
                  "{}: {}, opset {}: {}-{} is not supported (the importer implements {} from version {})",
                  model_.source(), where, opset, node.op_type(), version, node.op_type(), entry->oldest_supported);

    std::vector<Slot*> inputs;
    for (const auto& name : node.input()) {
      inputs.push_back(name.empty() ? nullptr : &slots_.at(name));
    }
    while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();

    NodeContext c(node, index, version, opset, std::move(inputs), evaluate);
    std::vector<Tensor> results;
    try {
      results = entry->translate(c);
    } catch (const Error& e) {
      // Errors from NodeContext::fail already name the node; those from the ops get the node prefixed.
      // Attribute strings from the file may appear in either, so the message is made printable.
      const std::string message = e.what();
      const std::string full = message.rfind(c.where(), 0) == 0 ? model_.source() + ": " + message
                                                                : fmt::format("{}: {}: {}", model_.source(), c.where(), message);
      throw Error(printable(full, 1500));
    }
    const std::vector<std::string> unread = c.unread_attributes();
    if (!unread.empty()) {
      fail("{}: {}: attribute '{}' is not supported by the importer", model_.source(), c.where(),
           printable(unread.front(), 60));
    }
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      TESSERA_CHECK(static_cast<size_t>(i) < results.size() && results[i].defined(),
                    "{}: {}: output {} ({}) is not supported by the importer", model_.source(), c.where(), i,
                    printable_quoted(node.output(i)));
      slots_[node.output(i)] = Slot{results[i], depends_on(results[i])};
    }
  }

  void check_declared_type(const OnnxValueInfo& o, const Tensor& t) const {
    if (o.elem_type == 0) return;
    const auto want = dtype_of_onnx(o.elem_type);
    TESSERA_CHECK(want.has_value(), "{}: output {} is {}, which has no Tessera dtype", model_.source(),
                  printable_quoted(o.name), onnx_type_name(o.elem_type));
    TESSERA_CHECK(*want == t.dtype(), "{}: output {} came out {}, the model declares {} (an importer bug)",
                  model_.source(), printable_quoted(o.name), dtype_name(t.dtype()), onnx_type_name(o.elem_type));
  }

  // Graph names appear in the IR's text form; keep them to identifier characters.
  static std::string sanitize(const std::string& name) {
    std::string out;
    for (char ch : name) {
      const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
      out += ok ? ch : '_';
      if (out.size() >= 64) break;
    }
    return out.empty() ? "onnx" : out;
  }

  // The graph inputs a value depends on, found through the IR nodes a translation built (so Shape's
  // result, a constant made from the input's type, depends on nothing); memoised per node.
  const std::vector<int>& depends_on_node(const ir::Node* node) {
    auto it = depends_.find(node);
    if (it != depends_.end()) return it->second;
    std::vector<int> all;
    for (const ir::Value& in : node->inputs()) {
      const std::vector<int>& d = depends_on_node(in.node().get());
      std::vector<int> merged;
      std::set_union(all.begin(), all.end(), d.begin(), d.end(), std::back_inserter(merged));
      all = std::move(merged);
    }
    return depends_[node] = std::move(all);
  }
  std::vector<int> depends_on(const Tensor& t) { return depends_on_node(t.value().node().get()); }

  const OnnxModel& model_;
  const pb::GraphProto& graph_;
  std::unordered_map<std::string, Slot> slots_;
  std::unordered_map<const ir::Node*, std::vector<int>> depends_;
};

}  // namespace

ImportedGraph import_onnx(const OnnxModel& model, const std::vector<ir::TensorType>& input_types,
                          const std::vector<Array>& input_values) {
  return Importer(model).run(input_types, input_values);
}

ImportedGraph import_onnx_for(const OnnxModel& model, const std::vector<Array>& inputs) {
  std::vector<ir::TensorType> types;
  for (const Array& a : inputs) types.push_back({a.dtype(), a.shape()});
  return import_onnx(model, types, inputs);
}

std::vector<Array> graph_inputs(const ImportedGraph& imported, const std::vector<Array>& inputs) {
  std::vector<Array> out;
  for (size_t i : imported.input_indices) out.push_back(inputs.at(i));
  return out;
}

ImportedGraph import_onnx(const OnnxModel& model) { return import_onnx(model, declared_input_types(model)); }

}  // namespace tessera::io::onnx
