#include "tessera/optim/adam.h"

#include <cmath>

#include "tessera/ops/ops.h"

namespace tessera::optim {

namespace {
AdamOptions validated(AdamOptions o, const char* what) {
  TESSERA_CHECK(o.beta1 >= 0.0 && o.beta1 < 1.0 && o.beta2 >= 0.0 && o.beta2 < 1.0,
                "{}: betas must be in [0, 1), got ({}, {})", what, o.beta1, o.beta2);
  TESSERA_CHECK(o.eps >= 0.0, "{}: eps must be non-negative, got {}", what, o.eps);
  TESSERA_CHECK(o.weight_decay >= 0.0, "{}: weight_decay must be non-negative, got {}", what, o.weight_decay);
  return o;
}
}  // namespace

Adam::Adam(std::vector<Tensor*> params, AdamOptions options) : Adam(std::move(params), options, "adam") {}
Adam::Adam(nn::Module& model, AdamOptions options) : Adam(model, options, "adam") {}
Adam::Adam(std::vector<Tensor*> params, AdamOptions options, const char* what)
    : Optimizer(std::move(params), options.lr), opt_(validated(options, what)) {}
Adam::Adam(nn::Module& model, AdamOptions options, const char* what)
    : Optimizer(model, options.lr), opt_(validated(options, what)) {}
AdamW::AdamW(std::vector<Tensor*> params, AdamOptions options) : Adam(std::move(params), options, "adamw") {}
AdamW::AdamW(nn::Module& model, AdamOptions options) : Adam(model, options, "adamw") {}

void Adam::update_moments(size_t i, const Tensor& grad) {
  Tensor& m = state(i, "exp_avg");
  Tensor& v = state(i, "exp_avg_sq");
  if (!m.defined()) m = ops::zeros_like(grad);
  if (!v.defined()) v = ops::zeros_like(grad);
  m = m * opt_.beta1 + grad * (1.0 - opt_.beta1);
  v = v * opt_.beta2 + ops::square(grad) * (1.0 - opt_.beta2);
}

Tensor Adam::update(size_t i, const Tensor& param, const Tensor& grad) {
  const Tensor g = opt_.weight_decay != 0.0 ? grad + param * opt_.weight_decay : grad;
  update_moments(i, g);
  const double t = static_cast<double>(steps_ + 1);
  const double bc1 = 1.0 - std::pow(opt_.beta1, t), bc2 = 1.0 - std::pow(opt_.beta2, t);
  const Tensor denom = ops::sqrt(state(i, "exp_avg_sq")) * (1.0 / std::sqrt(bc2)) + opt_.eps;
  return param - state(i, "exp_avg") / denom * (lr() / bc1);
}

Tensor AdamW::update(size_t i, const Tensor& param, const Tensor& grad) {
  const Tensor decayed = opt_.weight_decay != 0.0 ? param * (1.0 - lr() * opt_.weight_decay) : param;
  update_moments(i, grad);
  const double t = static_cast<double>(steps_ + 1);
  const double bc1 = 1.0 - std::pow(opt_.beta1, t), bc2 = 1.0 - std::pow(opt_.beta2, t);
  const Tensor denom = ops::sqrt(state(i, "exp_avg_sq")) * (1.0 / std::sqrt(bc2)) + opt_.eps;
  return decayed - state(i, "exp_avg") / denom * (lr() / bc1);
}

Tensor RAdam::update(size_t i, const Tensor& param, const Tensor& grad) {
  const Tensor g = opt_.weight_decay != 0.0 ? grad + param * opt_.weight_decay : grad;
  update_moments(i, g);
  const double t = static_cast<double>(steps_ + 1);
  const double b2t = std::pow(opt_.beta2, t);
  const double bc1 = 1.0 - std::pow(opt_.beta1, t), bc2 = 1.0 - b2t;
  const double rho_inf = 2.0 / (1.0 - opt_.beta2) - 1.0;
  const double rho_t = rho_inf - 2.0 * t * b2t / bc2;
  const Tensor m_hat = state(i, "exp_avg") * (1.0 / bc1);
  if (rho_t <= 5.0) return param - m_hat * lr();  // variance not yet tractable: plain momentum step
  const double rect = std::sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
  // PyTorch's l_t = sqrt(1 - beta2^t) / (sqrt(v_t) + eps): eps is added before the bias correction.
  const Tensor adaptive = ops::reciprocal(ops::sqrt(state(i, "exp_avg_sq")) + opt_.eps) * std::sqrt(bc2);
  return param - m_hat * adaptive * (lr() * rect);
}

}  // namespace tessera::optim
