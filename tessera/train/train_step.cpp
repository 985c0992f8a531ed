#include "tessera/train/train_step.h"

#include <cmath>

#include "tessera/autodiff/grad.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"

namespace tessera::train {

namespace {

std::vector<int64_t> signature(const Array& x, const Array& y) {
  std::vector<int64_t> key{static_cast<int64_t>(x.dtype()), x.rank()};
  key.insert(key.end(), x.shape().begin(), x.shape().end());
  key.push_back(static_cast<int64_t>(y.dtype()));
  key.push_back(y.rank());
  key.insert(key.end(), y.shape().begin(), y.shape().end());
  return key;
}

// Scales gradients to a global L2 norm of at most max_norm, as graph ops (no host round trip).
void clip_in_graph(std::vector<Tensor>& grads, double max_norm) {
  Tensor total;
  for (const Tensor& g : grads) {
    if (!g.defined()) continue;
    Tensor s = ops::sum(ops::square(ops::cast(g, DType::f64)));
    total = total.defined() ? total + s : s;
  }
  if (!total.defined()) return;
  const Tensor norm = ops::sqrt(total);
  const Tensor scale = ops::where(ops::gt(norm, Tensor::scalar(max_norm, DType::f64)),
                                  Tensor::scalar(max_norm, DType::f64) / (norm + 1e-6),
                                  Tensor::scalar(1.0, DType::f64));
  for (Tensor& g : grads) {
    if (g.defined()) g = g * ops::cast(scale, g.dtype());
  }
}

}  // namespace

CompiledTrainStep::CompiledTrainStep(nn::Module& model, optim::Optimizer& optimizer, LossFn loss, double clip_norm,
                                     backends::Backend* backend)
    : model_(model),
      optimizer_(optimizer),
      loss_(std::move(loss)),
      clip_norm_(clip_norm),
      backend_(backend ? *backend : backends::default_backend()),
      params_(model.named_parameters()),
      buffers_(model.named_buffers()),
      lr_(Array::scalar(0.0, DType::f64)),
      t_(Array::scalar(0.0, DType::f64)) {
  TESSERA_CHECK(optimizer.params().size() == params_.size(),
                "CompiledTrainStep: the optimiser holds {} parameters but the model has {}", optimizer.params().size(),
                params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    TESSERA_CHECK(optimizer.params()[i] == params_[i].second,
                  "CompiledTrainStep: the optimiser must be built over this model's parameters (in order); "
                  "parameter {} ('{}') differs",
                  i, params_[i].first);
  }
}

bool CompiledTrainStep::state_ready() const {
  for (size_t i = 0; i < params_.size(); ++i) {
    for (const std::string& slot : optimizer_.slots()) {
      if (!optimizer_.has_state(i, slot)) return false;
    }
  }
  return true;
}

void CompiledTrainStep::adopt_state() {
  // The state lives where the backend computes (GPU memory for a GPU backend), so a step moves
  // nothing but the batch; sync() brings it back to the host.
  Device& device = backend_.device();
  auto adopt = [&](const Array& a) { return device.is_host() ? a.copy() : a.contiguous().to(device); };
  slots_.clear();
  live_.clear();
  for (const auto& [name, p] : params_) live_.push_back(adopt(p->array()));
  for (size_t i = 0; i < params_.size(); ++i) {
    for (const std::string& slot : optimizer_.slots()) {
      slots_.emplace_back(i, slot);
      live_.push_back(adopt(optimizer_.state(i, slot).array()));
    }
  }
  for (const auto& [name, b] : buffers_) live_.push_back(adopt(b->array()));
  spare_.clear();
  for (const Array& a : live_) spare_.push_back(Array::empty(a.dtype(), a.shape(), device));
  adopted_ = true;
}

ir::Graph CompiledTrainStep::trace(const ir::TensorType& x_type, const ir::TensorType& y_type) {
  // Swap placeholders into the model and optimiser, build the step, then put everything back.
  std::vector<Tensor> saved_params, saved_buffers, inputs;
  std::vector<std::map<std::string, Tensor>> saved_state = optimizer_.state_;
  for (const auto& [name, p] : params_) {
    saved_params.push_back(*p);
    *p = Tensor::placeholder("param." + name, p->dtype(), p->shape());
    inputs.push_back(*p);
  }
  for (const auto& [i, slot] : slots_) {
    Tensor& s = optimizer_.state(i, slot);
    s = Tensor::placeholder("state." + params_[i].first + "." + slot, s.dtype(), s.shape());
    inputs.push_back(s);
  }
  for (const auto& [name, b] : buffers_) {
    saved_buffers.push_back(*b);
    *b = Tensor::placeholder("buffer." + name, b->dtype(), b->shape());
    inputs.push_back(*b);
  }
  const Tensor x = Tensor::placeholder("x", x_type.dtype, x_type.shape);
  const Tensor y = Tensor::placeholder("y", y_type.dtype, y_type.shape);
  const Tensor lr = Tensor::placeholder("lr", DType::f64, {});
  const Tensor t = Tensor::placeholder("step", DType::f64, {});
  for (const Tensor& extra : {x, y, lr, t}) inputs.push_back(extra);
  optimizer_.traced_lr_ = lr;
  optimizer_.traced_step_ = t;

  auto restore = [&] {
    for (size_t i = 0; i < params_.size(); ++i) *params_[i].second = saved_params[i];
    for (size_t i = 0; i < buffers_.size(); ++i) *buffers_[i].second = saved_buffers[i];
    optimizer_.state_ = saved_state;
    optimizer_.traced_lr_ = Tensor();
    optimizer_.traced_step_ = Tensor();
  };
  try {
    const Tensor loss = loss_(model_, x, y);
    TESSERA_CHECK(loss.numel() == 1 && is_floating(loss.dtype()),
                  "CompiledTrainStep: the loss must be a one-element floating tensor, got {}", ir::type_str(loss.type()));
    std::vector<ir::Value> wrt;
    for (size_t i = 0; i < params_.size(); ++i) wrt.push_back(inputs[i].value());
    std::vector<ir::Value> grad_values = autodiff::vjp({loss.value()}, {ops::ones_like(loss).value()}, wrt);
    std::vector<Tensor> grads(grad_values.begin(), grad_values.end());
    if (clip_norm_ > 0) clip_in_graph(grads, clip_norm_);

    std::vector<ir::Value> outputs{loss.value()};
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = inputs[i];
      outputs.push_back(grads[i].defined() ? optimizer_.update(i, p, ops::cast(grads[i], p.dtype())).value()
                                           : p.value());
    }
    for (const auto& [i, slot] : slots_) outputs.push_back(optimizer_.state(i, slot).value());
    for (const auto& [name, b] : buffers_) outputs.push_back(b->value());
    std::vector<ir::Value> input_values;
    for (const Tensor& in : inputs) input_values.push_back(in.value());
    ir::Graph graph = ir::Graph::build(input_values, outputs, "train_step");
    for (const ir::NodePtr& node : graph.nodes()) {
      // A traced random op would draw the same numbers every step.
      TESSERA_CHECK(!ir::OpRegistry::instance().get(node->op_name()).has(ir::kRandom),
                    "CompiledTrainStep: the step uses the random op '{}' (e.g. dropout), which a compiled step would "
                    "repeat identically; train this model eagerly",
                    node->op_name());
    }
    restore();
    return graph;
  } catch (...) {
    restore();
    throw;
  }
}

ir::Graph CompiledTrainStep::step_graph(const ir::TensorType& x_type, const ir::TensorType& y_type) {
  TESSERA_CHECK(adopted_ || state_ready(),
                "CompiledTrainStep::step_graph: make one step first (the optimiser's state does not exist yet)");
  if (!adopted_) adopt_state();
  return trace(x_type, y_type);
}

CompiledTrainStep::Plan& CompiledTrainStep::plan_for(const Array& x, const Array& y) {
  const std::vector<int64_t> key = signature(x, y);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  Plan plan;
  plan.executable = backend_.compile(trace({x.dtype(), x.shape()}, {y.dtype(), y.shape()}));
  return plans_.emplace(key, std::move(plan)).first->second;
}

double CompiledTrainStep::step(const Array& x, const Array& y) {
  if (!advance(x, y)) return eager_loss_;
  const Array loss = last_loss_array().to(host_device());
  return loss.dtype() == DType::f32 ? static_cast<double>(loss.data<float>()[0]) : loss.item();
}

bool CompiledTrainStep::advance(const Array& x, const Array& y) {
  if (!adopted_) {
    if (!state_ready()) {
      // The first step creates the optimiser's state with the eager path (SGD's momentum buffer starts
      // as the first gradient, for example); every later step runs compiled.
      const Tensor loss = loss_(model_, Tensor::from_array(x), Tensor::from_array(y));
      optimizer_.zero_grad();
      loss.backward();
      if (clip_norm_ > 0) optim::clip_grad_norm(optimizer_.params(), clip_norm_);
      optimizer_.step();
      eager_loss_ = loss.item();
      return false;
    }
    adopt_state();
  }
  Plan& plan = plan_for(x, y);
  last_ = plan.executable.get();
  lr_.data<double>()[0] = optimizer_.lr();
  t_.data<double>()[0] = static_cast<double>(optimizer_.step_count() + 1);

  inputs_.assign(live_.begin(), live_.end());
  inputs_.push_back(x);
  inputs_.push_back(y);
  inputs_.push_back(lr_);
  inputs_.push_back(t_);
  const ir::TensorType loss_type = plan.executable->graph().output_types()[0];
  if (outputs_.empty() || outputs_[0].dtype() != loss_type.dtype) {
    outputs_.assign(1, Array::empty(loss_type.dtype, loss_type.shape, plan.executable->device()));
  } else {
    outputs_.resize(1);
  }
  outputs_.insert(outputs_.end(), spare_.begin(), spare_.end());
  plan.executable->run_into(inputs_, outputs_);
  std::swap(live_, spare_);
  ++optimizer_.steps_;
  dirty_ = true;
  return true;
}

const Array& CompiledTrainStep::last_loss_array() const {
  TESSERA_CHECK(!outputs_.empty(), "CompiledTrainStep: no compiled step has run yet");
  return outputs_[0];
}

void CompiledTrainStep::sync() {
  if (!dirty_) return;
  size_t k = 0;
  // Parameters and buffers are written into their leaves in place (their identity is what compiled
  // functions captured); optimiser state gets fresh leaves.
  auto host = [](const Array& a) { return a.on_host() ? a : a.to(host_device()); };
  for (const auto& [name, p] : params_) p->assign(host(live_[k++]));
  for (const auto& [i, slot] : slots_) optimizer_.state(i, slot) = Tensor::from_array(host(live_[k++]).copy());
  for (const auto& [name, b] : buffers_) b->assign(host(live_[k++]));
  dirty_ = false;
}

}  // namespace tessera::train
