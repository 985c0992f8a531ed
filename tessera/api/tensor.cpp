#include "tessera/api/tensor.h"

#include <ostream>
#include <unordered_set>

#include "tessera/autodiff/grad.h"
#include "tessera/backends/backend.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"

namespace tessera {

Tensor Tensor::from_array(const Array& data, const std::string& name) { return ir::make_constant(data, name); }

Tensor Tensor::scalar(double value, DType dtype) { return from_array(Array::scalar(value, dtype)); }

Tensor Tensor::placeholder(const std::string& name, DType dtype, const Shape& shape) {
  return ir::make_input(name, ir::TensorType{dtype, shape});
}

int64_t Tensor::dim(int64_t axis) const { return shape()[normalize_axis(axis, rank(), "Tensor::dim")]; }

const std::string& Tensor::op_name() const {
  TESSERA_CHECK(defined(), "op_name of an undefined tensor");
  return value_.node()->op_name();
}

void eval(const std::vector<Tensor>& tensors) {
  // Bind every already-computed value as a graph input, compute the rest in one graph, memoise.
  std::vector<ir::Value> targets;
  std::unordered_set<const ir::Node*> target_nodes;
  for (const Tensor& t : tensors) {
    TESSERA_CHECK(t.defined(), "eval: undefined tensor");
    if (!t.value().node()->has_data() && target_nodes.insert(t.value().node().get()).second) {
      for (int i = 0; i < t.value().node()->num_outputs(); ++i) targets.emplace_back(t.value().node(), i);
    }
  }
  if (targets.empty()) return;

  std::vector<ir::Value> bound;
  std::vector<Array> bound_data;
  std::unordered_set<const ir::Node*> visited;
  std::vector<ir::NodePtr> stack;
  for (const ir::Value& v : targets) stack.push_back(v.node());
  while (!stack.empty()) {
    ir::NodePtr n = stack.back();
    stack.pop_back();
    if (!visited.insert(n.get()).second) continue;
    for (const ir::Value& in : n->inputs()) {
      const ir::NodePtr& p = in.node();
      if (p->has_data()) {
        if (visited.insert(p.get()).second) {
          for (int i = 0; i < p->num_outputs(); ++i) {
            bound.emplace_back(p, i);
            bound_data.push_back(p->runtime().outputs[static_cast<size_t>(i)]);
          }
        }
      } else if (p->op_name() == "input") {
        fail("eval: the value depends on placeholder '{}', which has no data (placeholders are bound by "
             "compile() or by running a graph)",
             p->attrs().get_string("name"));
      } else {
        stack.push_back(p);
      }
    }
  }
  ir::Graph graph = ir::Graph::build(bound, targets, "eval");
  std::vector<Array> results = backends::default_backend().compile(graph)->run(bound_data);
  for (size_t i = 0; i < targets.size();) {
    const ir::NodePtr& node = targets[i].node();
    std::vector<Array> outs(results.begin() + static_cast<long>(i),
                            results.begin() + static_cast<long>(i) + node->num_outputs());
    node->runtime().outputs = std::move(outs);
    i += static_cast<size_t>(node->num_outputs());
  }
}

const Tensor& Tensor::eval() const {
  tessera::eval({*this});
  return *this;
}

bool Tensor::is_evaluated() const { return defined() && value_.node()->has_data(); }

const Array& Tensor::array() const {
  eval();
  return value_.node()->runtime().outputs.at(static_cast<size_t>(value_.index()));
}

double Tensor::item() const { return array().item(); }

Tensor& Tensor::set_requires_grad(bool on) {
  TESSERA_CHECK(defined() && value_.node()->is_leaf(),
                "set_requires_grad: only leaf tensors (made from data) can require gradients; this tensor is "
                "the output of '{}'",
                defined() ? op_name() : std::string("nothing"));
  value_.node()->runtime().requires_grad = on;
  return *this;
}

bool Tensor::requires_grad() const { return defined() && value_.node()->runtime().requires_grad; }

void Tensor::backward() const {
  TESSERA_CHECK(defined() && numel() == 1, "backward: expected a one-element tensor (a loss), got {}",
                defined() ? ir::type_str(type()) : std::string("an undefined tensor"));
  TESSERA_CHECK(is_floating(dtype()), "backward: the loss must be floating point, got {}", dtype_name(dtype()));
  std::vector<ir::Value> leaves;
  std::unordered_set<const ir::Node*> visited;
  std::vector<ir::NodePtr> stack{value_.node()};
  while (!stack.empty()) {
    ir::NodePtr n = stack.back();
    stack.pop_back();
    if (!visited.insert(n.get()).second) continue;
    if (n->is_leaf() && n->runtime().requires_grad) leaves.emplace_back(n, 0);
    for (const ir::Value& in : n->inputs()) stack.push_back(in.node());
  }
  TESSERA_CHECK(!leaves.empty(), "backward: no tensor that requires a gradient contributes to this value");
  std::vector<ir::Value> grads = autodiff::vjp({value_}, {ops::ones_like(*this)}, leaves);
  std::vector<Tensor> grad_tensors(grads.begin(), grads.end());
  // The loss joins the evaluation so that reading it afterwards does not recompute the forward pass.
  std::vector<Tensor> targets = grad_tensors;
  targets.push_back(*this);
  tessera::eval(targets);
  for (size_t i = 0; i < leaves.size(); ++i) {
    auto& rt = leaves[i].node()->runtime();
    const Array& g = grad_tensors[i].array();
    rt.grad = rt.grad ? ops::add(Tensor::from_array(*rt.grad), Tensor::from_array(g)).array() : g;
  }
}

void Tensor::assign(const Array& value) {
  TESSERA_CHECK(defined(), "assign: undefined tensor");
  TESSERA_CHECK(value.defined(), "assign: undefined array");
  const ir::Node& node = *value_.node();
  if (node.op_name() == "constant" && node.has_data() && dtype() == value.dtype() && shape() == value.shape()) {
    Array& data = node.runtime().outputs[0];
    if (!data.storage()->external()) {
      data.copy_from(value);
      return;
    }
  }
  const bool grad = requires_grad(), variable = node.runtime().variable;
  *this = from_array(value.copy());
  value_.node()->runtime().requires_grad = grad;
  value_.node()->runtime().variable = variable;
}

Tensor Tensor::grad() const {
  if (!defined() || !value_.node()->runtime().grad) return Tensor();
  return from_array(*value_.node()->runtime().grad);
}

void Tensor::zero_grad() const {
  if (defined()) value_.node()->runtime().grad.reset();
}

Tensor Tensor::detach() const {
  if (is_evaluated()) return from_array(array());
  return ops::stop_gradient(*this);
}

std::string Tensor::to_string(int64_t max_elements) const {
  if (!defined()) return "Tensor(undefined)";
  return "Tensor" + array().to_string(max_elements).substr(5);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

Tensor operator+(const Tensor& a, const Tensor& b) { return ops::add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return ops::sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return ops::mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return ops::div(a, b); }
Tensor operator-(const Tensor& a) { return ops::neg(a); }
Tensor operator+(const Tensor& a, double b) { return ops::add(a, ops::scalar_like(a, b)); }
Tensor operator-(const Tensor& a, double b) { return ops::sub(a, ops::scalar_like(a, b)); }
Tensor operator*(const Tensor& a, double b) { return ops::mul(a, ops::scalar_like(a, b)); }
Tensor operator/(const Tensor& a, double b) { return ops::div(a, ops::scalar_like(a, b)); }
Tensor operator+(double a, const Tensor& b) { return ops::add(ops::scalar_like(b, a), b); }
Tensor operator-(double a, const Tensor& b) { return ops::sub(ops::scalar_like(b, a), b); }
Tensor operator*(double a, const Tensor& b) { return ops::mul(ops::scalar_like(b, a), b); }
Tensor operator/(double a, const Tensor& b) { return ops::div(ops::scalar_like(b, a), b); }

}  // namespace tessera
