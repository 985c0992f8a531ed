#pragma once
// What a translation sees of one ONNX node: its inputs as Tensors (and, where the op needs a value at
// import time, such as Reshape's shape, as data), its attributes with the spec's defaults supplied by
// the caller, and a fail() that names the node, the op and the opset. Every attribute the node carries
// must be read by its translation: one left unread is an attribute the importer does not implement,
// and import fails naming it rather than ignoring it.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/api/tensor.h"
#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_proto.h"

namespace tessera::io::onnx {

// An ONNX value during import and the graph inputs it depends on (by index; sorted). Values that
// depend on none are constants, which the importer can compute when a translation needs their data.
struct Slot {
  Tensor tensor;
  std::vector<int> graph_inputs;
  bool constant() const { return graph_inputs.empty(); }
};

class NodeContext {
 public:
  // Computes a slot's value at import time, or returns nothing when it depends on graph inputs whose
  // values are not known.
  using Evaluate = std::function<std::optional<Array>(Slot&)>;
  NodeContext(const pb::NodeProto& node, int index, int64_t version, int64_t opset, std::vector<Slot*> inputs,
              Evaluate evaluate);

  const std::string& op() const { return node_.op_type(); }
  int64_t version() const { return version_; }  // the op's version that the model's opset selects
  int64_t opset() const { return opset_; }
  std::string where() const;  // "node 3 'conv1' (Conv-11, opset 13)"

  // Inputs; a trailing or empty-named one is absent (ONNX's optional inputs).
  size_t input_count() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  Tensor input(size_t i) const;  // fails when absent
  std::vector<Tensor> inputs() const;  // all present inputs, in order (variadic ops)
  // The value of an input needed while importing (a shape, axes, pads); fails when it depends on a
  // graph input. `role` names it in errors ("shape").
  Array constant_input(size_t i, const std::string& role) const;
  std::vector<int64_t> constant_ints(size_t i, const std::string& role) const;
  std::vector<double> constant_doubles(size_t i, const std::string& role) const;

  // Outputs the model reads (an empty name means the output is not wanted).
  size_t output_count() const { return static_cast<size_t>(node_.output_size()); }
  bool wants_output(size_t i) const { return i < output_count() && !node_.output(static_cast<int>(i)).empty(); }

  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& fallback = {}) const;
  std::vector<double> attr_floats(const std::string& name, const std::vector<double>& fallback = {}) const;
  std::vector<std::string> attr_strings(const std::string& name, const std::vector<std::string>& fallback = {}) const;
  std::optional<std::vector<int64_t>> optional_ints(const std::string& name) const;
  Array attr_tensor(const std::string& name) const;  // fails when absent
  int64_t required_int(const std::string& name) const;
  // Marks an attribute read without using it: for attributes that do not change the result.
  void ignore_attr(const std::string& name) const;

  // Attributes the node carries that the translation never read.
  std::vector<std::string> unread_attributes() const;

  template <class... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error(where() + ": " + fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  const pb::AttributeProto* find_attr(const std::string& name, pb::AttributeProto::AttributeType type) const;

  const pb::NodeProto& node_;
  int index_;
  int64_t version_;
  int64_t opset_;
  std::vector<Slot*> inputs_;
  Evaluate evaluate_;
  mutable std::set<std::string> read_;
};

}  // namespace tessera::io::onnx
