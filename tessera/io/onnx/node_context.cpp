#include "tessera/io/onnx/node_context.h"

#include "tessera/core/printable.h"
#include "tessera/io/onnx/model_impl.h"
#include "tessera/io/onnx/tensor_proto.h"

namespace tessera::io::onnx {

namespace {

const char* attribute_type_name(pb::AttributeProto::AttributeType type) {
  switch (type) {
    case pb::AttributeProto::FLOAT: return "a float";
    case pb::AttributeProto::INT: return "an int";
    case pb::AttributeProto::STRING: return "a string";
    case pb::AttributeProto::TENSOR: return "a tensor";
    case pb::AttributeProto::GRAPH: return "a graph";
    case pb::AttributeProto::FLOATS: return "floats";
    case pb::AttributeProto::INTS: return "ints";
    case pb::AttributeProto::STRINGS: return "strings";
    default: return "another kind";
  }
}

}  // namespace

NodeContext::NodeContext(const pb::NodeProto& node, int index, int64_t version, int64_t opset,
                         std::vector<Slot*> inputs, Evaluate evaluate)
    : node_(node), index_(index), version_(version), opset_(opset), inputs_(std::move(inputs)),
      evaluate_(std::move(evaluate)) {}

std::string NodeContext::where() const {
  const std::string op = fmt::format("{}-{}, opset {}", printable(node_.op_type(), 60), version_, opset_);
  if (node_.name().empty()) return fmt::format("node {} ({})", index_, op);
  return fmt::format("node {} {} ({})", index_, printable_quoted(node_.name(), 80), op);
}

Tensor NodeContext::input(size_t i) const {
  if (!has_input(i)) fail("input {} is required but absent", i);
  return inputs_[i]->tensor;
}

std::vector<Tensor> NodeContext::inputs() const {
  std::vector<Tensor> out;
  for (const Slot* s : inputs_) {
    if (s != nullptr) out.push_back(s->tensor);
  }
  return out;
}

Array NodeContext::constant_input(size_t i, const std::string& role) const {
  if (!has_input(i)) fail("input {} ({}) is required but absent", i, role);
  std::optional<Array> value = evaluate_(*inputs_[i]);
  if (!value) {
    fail("input {} ({}, {}) must be known when the model is imported, but it depends on a graph input", i, role,
         printable_quoted(node_.input(static_cast<int>(i))));
  }
  return *value;
}

std::vector<int64_t> NodeContext::constant_ints(size_t i, const std::string& role) const {
  const Array a = constant_input(i, role);
  if (!is_integral(a.dtype())) fail("input {} ({}) is {}, expected an integer tensor", i, role, dtype_name(a.dtype()));
  if (a.rank() > 1) fail("input {} ({}) has rank {}, expected a scalar or a 1-D tensor", i, role, a.rank());
  return a.to_vector<int64_t>();
}

std::vector<double> NodeContext::constant_doubles(size_t i, const std::string& role) const {
  const Array a = constant_input(i, role);
  if (a.rank() > 1) fail("input {} ({}) has rank {}, expected a scalar or a 1-D tensor", i, role, a.rank());
  return a.to_vector<double>();
}

const pb::AttributeProto* NodeContext::find_attr(const std::string& name,
                                                 pb::AttributeProto::AttributeType type) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() != name) continue;
    read_.insert(name);
    if (a.has_ref_attr_name()) fail("attribute '{}' refers to a function's attribute, which is not supported", name);
    if (a.type() != type) {
      fail("attribute '{}' is {}, expected {}", name, attribute_type_name(a.type()), attribute_type_name(type));
    }
    return &a;
  }
  return nullptr;
}

bool NodeContext::has_attr(const std::string& name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return true;
  }
  return false;
}

int64_t NodeContext::attr_int(const std::string& name, int64_t fallback) const {
  const auto* a = find_attr(name, pb::AttributeProto::INT);
  return a ? a->i() : fallback;
}

double NodeContext::attr_float(const std::string& name, double fallback) const {
  const auto* a = find_attr(name, pb::AttributeProto::FLOAT);
  return a ? static_cast<double>(a->f()) : fallback;
}

std::string NodeContext::attr_string(const std::string& name, const std::string& fallback) const {
  const auto* a = find_attr(name, pb::AttributeProto::STRING);
  return a ? a->s() : fallback;
}

std::vector<int64_t> NodeContext::attr_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  const auto* a = find_attr(name, pb::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<double> NodeContext::attr_floats(const std::string& name, const std::vector<double>& fallback) const {
  const auto* a = find_attr(name, pb::AttributeProto::FLOATS);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : fallback;
}

std::vector<std::string> NodeContext::attr_strings(const std::string& name,
                                                  const std::vector<std::string>& fallback) const {
  const auto* a = find_attr(name, pb::AttributeProto::STRINGS);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end()) : fallback;
}

std::optional<std::vector<int64_t>> NodeContext::optional_ints(const std::string& name) const {
  const auto* a = find_attr(name, pb::AttributeProto::INTS);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Array NodeContext::attr_tensor(const std::string& name) const {
  const auto* a = find_attr(name, pb::AttributeProto::TENSOR);
  if (!a) fail("attribute '{}' is required", name);
  // Tensors inside nodes have no folder to read external data from.
  return array_from_tensor_proto(a->t(), where() + ": attribute '" + name + "'", "");
}

int64_t NodeContext::required_int(const std::string& name) const {
  const auto* a = find_attr(name, pb::AttributeProto::INT);
  if (!a) fail("attribute '{}' is required", name);
  return a->i();
}

void NodeContext::ignore_attr(const std::string& name) const { read_.insert(name); }

std::vector<std::string> NodeContext::unread_attributes() const {
  std::vector<std::string> out;
  for (const auto& a : node_.attribute()) {
    if (read_.count(a.name()) == 0) out.push_back(a.name());
  }
  return out;
}

}  // namespace tessera::io::onnx
