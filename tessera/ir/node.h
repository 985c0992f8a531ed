#pragma once
// Nodes and values of the graph IR. A Node is an op applied to input values, with typed attributes
// and one or more typed outputs; it is immutable once built and shared by every graph that uses it.
// A Value names one output of one node. Leaves (inputs, constants) are nodes too, each with its own
// identity: two leaves are never merged, however equal they look.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/attr.h"

namespace tessera::ir {

struct OpDef;
class Node;

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;
  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
  int64_t numel() const { return shape_numel(shape); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};
std::string type_str(const TensorType& t);  // "f32[2, 3]"

class Value {
 public:
  Value() = default;
  Value(std::shared_ptr<const Node> node, int index) : node_(std::move(node)), index_(index) {}

  bool defined() const { return node_ != nullptr; }
  const std::shared_ptr<const Node>& node() const { return node_; }
  int index() const { return index_; }
  const TensorType& type() const;
  DType dtype() const { return type().dtype; }
  const Shape& shape() const { return type().shape; }
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }

  bool operator==(const Value& o) const { return node_ == o.node_ && index_ == o.index_; }
  bool operator!=(const Value& o) const { return !(*this == o); }

 private:
  friend class Node;  // ~Node takes its inputs' node pointers to release them iteratively
  std::shared_ptr<const Node> node_;
  int index_ = 0;
};

struct ValueHash {
  size_t operator()(const Value& v) const {
    return std::hash<const void*>()(v.node().get()) * 31 + static_cast<size_t>(v.index());
  }
};

class Node {
 public:
  Node(const OpDef* op, std::vector<Value> inputs, Attrs attrs, std::vector<TensorType> outputs);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const OpDef& op() const { return *op_; }
  const std::string& op_name() const;
  const std::vector<Value>& inputs() const { return inputs_; }
  const Value& input(size_t i) const { return inputs_.at(i); }
  const Attrs& attrs() const { return attrs_; }
  const std::vector<TensorType>& output_types() const { return outputs_; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  uint64_t id() const { return id_; }  // unique per process, increasing in creation order
  bool is_leaf() const;
  // The modules and user-level ops active when the node was built (ir/origin.h); "" if none.
  const std::string& origin() const;
  const std::shared_ptr<const std::string>& origin_ptr() const { return origin_; }

  // Evaluation memo, not part of the node's meaning: the computed outputs once something evaluated
  // this node eagerly, and for leaves the autograd flag and accumulated gradient used by
  // Tensor::backward(). Stored as concrete arrays so that no reference cycle can form.
  struct Runtime {
    std::vector<Array> outputs;
    bool requires_grad = false;
    // A leaf whose data is overwritten in place between runs (a module's parameter or buffer):
    // compile() reads it at every call instead of folding it into the graph as a constant.
    bool variable = false;
    std::optional<Array> grad;
  };
  Runtime& runtime() const { return runtime_; }
  bool has_data() const { return !runtime_.outputs.empty(); }

 private:
  const OpDef* op_;
  std::vector<Value> inputs_;
  Attrs attrs_;
  std::vector<TensorType> outputs_;
  uint64_t id_;
  std::shared_ptr<const std::string> origin_;
  mutable Runtime runtime_;
};

using NodePtr = std::shared_ptr<const Node>;

// Builds a node after checking the input count and attributes against the op's schema and running
// its shape/dtype inference; throws tessera::Error naming the op and the input types on failure.
std::vector<Value> make_node(const std::string& op, std::vector<Value> inputs, Attrs attrs = {});
Value make_node1(const std::string& op, std::vector<Value> inputs, Attrs attrs = {});
// As make_node, with the output types given rather than inferred (used by the parser and by leaves
// whose type is their attribute); the types are still checked against inference.
std::vector<Value> make_node_typed(const OpDef& op, std::vector<Value> inputs, Attrs attrs,
                                   std::vector<TensorType> outputs);

// Leaves: a placeholder bound at run time, and a constant holding its data.
Value make_input(const std::string& name, const TensorType& type);
Value make_constant(const Array& value, const std::string& name = "");

}  // namespace tessera::ir
