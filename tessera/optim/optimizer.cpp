#include "tessera/optim/optimizer.h"

#include <cmath>

#include "tessera/core/parse_int.h"
#include "tessera/ir/node.h"
#include "tessera/ops/ops.h"

namespace tessera::optim {

Optimizer::Optimizer(std::vector<Tensor*> params, double lr) : params_(std::move(params)), lr_(lr) {
  TESSERA_CHECK(lr >= 0.0, "optimizer: learning rate must be non-negative, got {}", lr);
  for (size_t i = 0; i < params_.size(); ++i) names_.push_back(std::to_string(i));
  state_.resize(params_.size());
}

Optimizer::Optimizer(nn::Module& model, double lr) : module_(&model), lr_(lr) {
  TESSERA_CHECK(lr >= 0.0, "optimizer: learning rate must be non-negative, got {}", lr);
  for (auto& [n, p] : model.named_parameters()) {
    params_.push_back(p);
    names_.push_back(n);
  }
  state_.resize(params_.size());
}

void Optimizer::step() {
  std::vector<Tensor> grads;
  for (Tensor* p : params_) grads.push_back(p->grad());
  step(grads);
}

void Optimizer::step(const std::vector<Tensor>& grads) {
  TESSERA_CHECK(grads.size() == params_.size(), "{}: {} gradients for {} parameters", name(), grads.size(),
                params_.size());
  std::vector<Tensor> pending;
  std::vector<Tensor> updated(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!grads[i].defined()) continue;
    TESSERA_CHECK(grads[i].shape() == params_[i]->shape(), "{}: gradient of '{}' is {} but the parameter is {}", name(),
                  names_[i], ir::type_str(grads[i].type()), ir::type_str(params_[i]->type()));
    updated[i] = update(i, *params_[i], ops::cast(grads[i], params_[i]->dtype()));
    pending.push_back(updated[i]);
    for (auto& [slot, t] : state_[i]) pending.push_back(t);
  }
  if (module_) {
    for (auto& [n, b] : module_->named_buffers()) pending.push_back(*b);
  }
  tessera::eval(pending);
  // Parameters are updated in place (the leaves keep their identity, as PyTorch's do), so compiled
  // functions that captured them read the new values.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!updated[i].defined()) continue;
    params_[i]->assign(updated[i].array());
    for (auto& [slot, t] : state_[i]) t = Tensor::from_array(t.array());
  }
  if (module_) module_->commit();
  ++steps_;
}

Tensor Optimizer::lr_scalar() const { return traced_lr_.defined() ? traced_lr_ : Tensor::scalar(lr_, DType::f64); }

Tensor Optimizer::step_scalar() const {
  return traced_step_.defined() ? traced_step_ : Tensor::scalar(static_cast<double>(steps_ + 1), DType::f64);
}

Tensor Optimizer::scalar_as(const Tensor& scalar, const Tensor& like) { return ops::cast(scalar, like.dtype()); }

void Optimizer::set_lr(double lr) {
  TESSERA_CHECK(lr >= 0.0, "{}: learning rate must be non-negative, got {}", name(), lr);
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (Tensor* p : params_) p->zero_grad();
}

StateDict Optimizer::state_dict() const {
  StateDict out;
  for (size_t i = 0; i < params_.size(); ++i) {
    for (const auto& [slot, t] : state_[i]) out[names_[i] + "." + slot] = t.array();
  }
  return out;
}

std::map<std::string, std::string> Optimizer::state_metadata() const {
  return {{"optimizer", name()}, {"step", std::to_string(steps_)}, {"lr", fmt::format("{}", lr_)}};
}

void Optimizer::load_state_dict(const StateDict& state, const std::map<std::string, std::string>& metadata) {
  auto it = metadata.find("optimizer");
  TESSERA_CHECK(it != metadata.end() && it->second == name(), "{}: checkpoint holds state of optimizer '{}'", name(),
                it == metadata.end() ? std::string("none") : it->second);
  auto st = metadata.find("step");
  TESSERA_CHECK(st != metadata.end(), "{}: checkpoint lacks the optimizer step count", name());
  const int64_t steps =
      parse_int_or_fail(st->second, 0, kMaxStepCount, fmt::format("{}: the checkpoint's step count", name()));
  // Validate everything before replacing any state.
  std::vector<std::map<std::string, Tensor>> loaded(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    for (const std::string& slot : slots()) {
      auto s = state.find(names_[i] + "." + slot);
      if (s == state.end()) {
        TESSERA_CHECK(steps == 0, "{}: checkpoint lacks optimizer state '{}.{}'", name(), names_[i], slot);
        continue;
      }
      TESSERA_CHECK(s->second.shape() == params_[i]->shape(),
                    "{}: optimizer state '{}.{}' has shape {} but the parameter has {}", name(), names_[i], slot,
                    shape_str(s->second.shape()), shape_str(params_[i]->shape()));
      TESSERA_CHECK(is_floating(s->second.dtype()), "{}: optimizer state '{}.{}' is {}, expected a floating dtype",
                    name(), names_[i], slot, dtype_name(s->second.dtype()));
      const DType want = params_[i]->dtype();
      loaded[i][slot] = Tensor::from_array(s->second.dtype() == want ? s->second : s->second.astype(want));
    }
  }
  state_ = std::move(loaded);
  steps_ = steps;
}

double clip_grad_norm(std::vector<Tensor>& grads, double max_norm) {
  TESSERA_CHECK(max_norm > 0, "clip_grad_norm: max_norm must be positive, got {}", max_norm);
  Tensor total;
  for (const Tensor& g : grads) {
    if (!g.defined()) continue;
    Tensor s = ops::sum(ops::square(ops::cast(g, DType::f64)));
    total = total.defined() ? total + s : s;
  }
  if (!total.defined()) return 0.0;
  const double norm = std::sqrt(total.item());
  if (norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    std::vector<Tensor> scaled;  // parameters without a gradient stay undefined
    for (Tensor& g : grads) {
      if (!g.defined()) continue;
      g = g * scale;
      scaled.push_back(g);
    }
    tessera::eval(scaled);
  }
  return norm;
}

double clip_grad_norm(const std::vector<Tensor*>& params, double max_norm) {
  std::vector<Tensor> grads;
  for (Tensor* p : params) grads.push_back(p->grad());
  const double norm = clip_grad_norm(grads, max_norm);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!grads[i].defined()) continue;
    params[i]->value().node()->runtime().grad = grads[i].array();
  }
  return norm;
}

}  // namespace tessera::optim
