#include "tessera/ir/node.h"

#include "tessera/ir/op_def.h"
#include "tessera/ir/origin.h"

namespace tessera::ir {

namespace {
std::atomic<uint64_t> next_node_id{1};
}

std::string type_str(const TensorType& t) { return fmt::format("{}{}", dtype_name(t.dtype), shape_str(t.shape)); }

const TensorType& Value::type() const {
  TESSERA_CHECK(node_ != nullptr, "use of an undefined value (a tensor that was never assigned)");
  return node_->output_types().at(static_cast<size_t>(index_));
}

Node::Node(const OpDef* op, std::vector<Value> inputs, Attrs attrs, std::vector<TensorType> outputs)
    : op_(op), inputs_(std::move(inputs)), attrs_(std::move(attrs)), outputs_(std::move(outputs)),
      id_(next_node_id.fetch_add(1)), origin_(current_origin()) {}

Node::~Node() {
  // Releasing a long chain (a 100k-step recurrence) would recurse once per node and overflow the
  // stack; instead the outermost destructor drains a worklist of inputs that die with this node.
  thread_local std::vector<std::shared_ptr<const Node>>* pending = nullptr;
  std::vector<std::shared_ptr<const Node>> local;
  const bool outermost = pending == nullptr;
  if (outermost) pending = &local;
  for (Value& v : inputs_) {
    if (v.node_) pending->push_back(std::move(v.node_));
  }
  inputs_.clear();
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<const Node> n = std::move(local.back());
      local.pop_back();
      n.reset();  // may push this node's inputs onto `local`
    }
    pending = nullptr;
  }
}

const std::string& Node::op_name() const { return op_->name; }
const std::string& Node::origin() const {
  static const std::string none;
  return origin_ ? *origin_ : none;
}
bool Node::is_leaf() const { return op_->has(kLeaf); }

namespace {

void check_attrs(const OpDef& op, const std::vector<TensorType>& in, const Attrs& attrs) {
  for (const auto& [name, value] : attrs.values()) {
    const AttrSpec* spec = nullptr;
    for (const auto& s : op.attrs) {
      if (s.name == name) spec = &s;
    }
    if (!spec) {
      std::string known;
      for (const auto& s : op.attrs) known += (known.empty() ? "" : ", ") + s.name;
      op_fail(op.name, in, "unknown attribute '{}' (known: {})", name, known.empty() ? "none" : known);
    }
    const AttrKind kind = attr_kind_of(value);
    const bool int_as_float = spec->kind == AttrKind::Float && kind == AttrKind::Int;
    if (kind != spec->kind && !int_as_float) {
      op_fail(op.name, in, "attribute '{}' is a {}, expected a {}", name, attr_kind_name(kind),
              attr_kind_name(spec->kind));
    }
  }
  for (const auto& s : op.attrs) {
    if (s.required && !attrs.has(s.name)) {
      op_fail(op.name, in, "missing required attribute '{}' ({})", s.name, attr_kind_name(s.kind));
    }
  }
}

std::vector<TensorType> infer_checked(const OpDef& op, const std::vector<Value>& inputs, const Attrs& attrs,
                                      std::vector<TensorType>& in_types) {
  in_types.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) fail("op '{}': input {} is undefined", op.name, i);
    in_types.push_back(inputs[i].type());
  }
  const int n = static_cast<int>(inputs.size());
  if (n < op.min_inputs || (op.max_inputs >= 0 && n > op.max_inputs)) {
    if (op.min_inputs == op.max_inputs) {
      op_fail(op.name, in_types, "expected {} inputs, got {}", op.min_inputs, n);
    }
    op_fail(op.name, in_types, "expected {}..{} inputs, got {}", op.min_inputs,
            op.max_inputs < 0 ? std::string("any") : std::to_string(op.max_inputs), n);
  }
  check_attrs(op, in_types, attrs);
  return op.infer(in_types, attrs);
}

std::vector<Value> outputs_of(const std::shared_ptr<const Node>& node) {
  std::vector<Value> out;
  for (int i = 0; i < node->num_outputs(); ++i) out.emplace_back(node, i);
  return out;
}

}  // namespace

std::vector<Value> make_node(const std::string& op_name, std::vector<Value> inputs, Attrs attrs) {
  const OpDef& op = OpRegistry::instance().get(op_name);
  std::vector<TensorType> in_types;
  std::vector<TensorType> out_types = infer_checked(op, inputs, attrs, in_types);
  auto node = std::make_shared<const Node>(&op, std::move(inputs), std::move(attrs), std::move(out_types));
  return outputs_of(node);
}

Value make_node1(const std::string& op, std::vector<Value> inputs, Attrs attrs) {
  auto outs = make_node(op, std::move(inputs), std::move(attrs));
  TESSERA_CHECK(outs.size() == 1, "op '{}' has {} outputs where one was expected", op, outs.size());
  return outs[0];
}

std::vector<Value> make_node_typed(const OpDef& op, std::vector<Value> inputs, Attrs attrs,
                                   std::vector<TensorType> outputs) {
  std::vector<TensorType> in_types;
  std::vector<TensorType> inferred = infer_checked(op, inputs, attrs, in_types);
  if (inferred != outputs) {
    std::string want, got;
    for (const auto& t : inferred) want += (want.empty() ? "" : ", ") + type_str(t);
    for (const auto& t : outputs) got += (got.empty() ? "" : ", ") + type_str(t);
    op_fail(op.name, in_types, "declared output types ({}) differ from the inferred ({})", got, want);
  }
  auto node = std::make_shared<const Node>(&op, std::move(inputs), std::move(attrs), std::move(outputs));
  return outputs_of(node);
}

Value make_input(const std::string& name, const TensorType& type) {
  return make_node1("input", {}, Attrs{{"name", name}, {"dtype", type.dtype}, {"shape", type.shape}});
}

Value make_constant(const Array& value, const std::string& name) {
  TESSERA_CHECK(value.defined(), "make_constant: undefined array");
  Attrs attrs{{"value", value}};
  if (!name.empty()) attrs.set("name", name);
  Value v = make_node1("constant", {}, std::move(attrs));
  v.node()->runtime().outputs = {value};
  return v;
}

}  // namespace tessera::ir
