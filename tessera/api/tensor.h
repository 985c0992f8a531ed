#pragma once
// Tensor: the user's handle to a value in the graph. Ops on tensors build nodes; nothing runs until a
// value is needed (eval(), reading data, backward()). Tensors are cheap to copy (they share the node).
#include <iosfwd>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/node.h"

namespace tessera {

// A lazy value: a handle to a node of the graph, with PyTorch-style autograd on leaves.
class Tensor {
 public:
  Tensor() = default;
  Tensor(ir::Value value) : value_(std::move(value)) {}  // NOLINT: tensors and values interconvert freely
  explicit Tensor(const Array& data) : Tensor(from_array(data)) {}  // a leaf sharing `data`'s storage (no copy)

  // Leaves holding data. `name` is kept in the IR (useful for parameters).
  static Tensor from_array(const Array& data, const std::string& name = "");
  // A leaf holding a copy of `values` (row-major, values.size() == numel(shape)), of T's dtype.
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape, const std::string& name = "") {
    return from_array(Array::from_vector(values, shape), name);
  }
  // A rank-0 leaf holding `value` converted to `dtype`.
  static Tensor scalar(double value, DType dtype = DType::f32);
  // A placeholder bound at run time (used when tracing functions into graphs).
  static Tensor placeholder(const std::string& name, DType dtype, const Shape& shape);

  operator const ir::Value&() const { return value_; }  // NOLINT
  const ir::Value& value() const { return value_; }  // the graph value (node and output index) behind it
  bool defined() const { return value_.defined(); }  // false for a default-constructed tensor
  const ir::TensorType& type() const { return value_.type(); }  // dtype and shape, known without evaluating
  DType dtype() const { return type().dtype; }  // element type, known without evaluating
  const Shape& shape() const { return type().shape; }  // dimensions, known without evaluating
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }  // number of dimensions (0 for a scalar)
  int64_t dim(int64_t axis) const;  // negative axes count from the end
  int64_t numel() const { return shape_numel(shape()); }  // number of elements (1 for a scalar)
  const std::string& op_name() const;  // the op that produces this tensor

  // Evaluation.
  const Tensor& eval() const;  // computes (once) and memoises the value
  bool is_evaluated() const;  // whether the value has been computed (or is a leaf with data); never computes
  const Array& array() const;  // evaluates if needed
  // The elements, evaluating if needed, converted to T, in row-major order.
  template <class T>
  std::vector<T> to_vector() const {
    return array().to_vector<T>();
  }
  double item() const;  // the single element as a double

  // PyTorch-style autograd on leaves: mark, backward() from a scalar, read the accumulated grad.
  Tensor& set_requires_grad(bool on = true);
  bool requires_grad() const;  // whether backward() accumulates a gradient into this leaf
  // Accumulates d(this)/d(leaf) into grad() of every leaf with requires_grad that this depends on (adding
  // to what is there, as PyTorch does). Throws tessera::Error unless this is a one-element floating-point
  // tensor that depends on at least one such leaf.
  void backward() const;
  Tensor grad() const;  // undefined if no gradient has been accumulated
  void zero_grad() const;  // drops the accumulated gradient (grad() becomes undefined)
  // Replaces this tensor's value (PyTorch's copy_ on a leaf). A leaf that owns its memory and has the
  // value's dtype and shape keeps its identity and has its data overwritten, so compiled functions that
  // captured it, and views of it, see the new value; any other tensor becomes a fresh leaf holding a copy
  // (keeping requires_grad and the variable mark).
  void assign(const Array& value);
  // The same value cut off from gradients. An evaluated tensor becomes a fresh leaf holding its data
  // (which also frees the history); otherwise a stop_gradient node.
  Tensor detach() const;

  // "Tensor(f32[2, 3], [1, 2, ...])": dtype, shape and the first `max_elements` elements; evaluates.
  std::string to_string(int64_t max_elements = 64) const;

 private:
  ir::Value value_;
};

// Evaluates several tensors in one graph, sharing common work.
void eval(const std::vector<Tensor>& tensors);

// Writes t.to_string() (evaluating t).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Operators: thin aliases of ops::add, ops::sub, ops::mul, ops::div, ops::neg (scalars become
// constants of the tensor's dtype).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);  // ops::sub: elementwise, broadcasting
Tensor operator*(const Tensor& a, const Tensor& b);  // ops::mul: elementwise (not matmul), broadcasting
Tensor operator/(const Tensor& a, const Tensor& b);  // ops::div: elementwise, broadcasting
Tensor operator-(const Tensor& a);                   // ops::neg
Tensor operator+(const Tensor& a, double b);         // a + b, b as a constant of a's dtype
Tensor operator-(const Tensor& a, double b);         // a - b, b as a constant of a's dtype
Tensor operator*(const Tensor& a, double b);         // a * b, b as a constant of a's dtype
Tensor operator/(const Tensor& a, double b);         // a / b, b as a constant of a's dtype
Tensor operator+(double a, const Tensor& b);         // a + b, a as a constant of b's dtype
Tensor operator-(double a, const Tensor& b);         // a - b, a as a constant of b's dtype
Tensor operator*(double a, const Tensor& b);         // a * b, a as a constant of b's dtype
Tensor operator/(double a, const Tensor& b);         // a / b, a as a constant of b's dtype

}  // namespace tessera
