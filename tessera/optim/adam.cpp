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
AdamW::AdamW(std::vector<Tensor*> params, AdamWOptions options) : Adam(std::move(params), options.adam(), "adamw") {}
AdamW::AdamW(nn::Module& model, AdamWOptions options) : Adam(model, options.adam(), "adamw") {}

void Adam::update_moments(size_t i, const Tensor& grad) {
  Tensor& m = state(i, "exp_avg");
  Tensor& v = state(i, "exp_avg_sq");
  if (!m.defined()) m = ops::zeros_like(grad);
  if (!v.defined()) v = ops::zeros_like(grad);
  m = m * opt_.beta1 + grad * (1.0 - opt_.beta1);
  v = v * opt_.beta2 + ops::square(grad) * (1.0 - opt_.beta2);
}

namespace {
// 1 - beta^t, in f64, for Adam's bias corrections.
Tensor bias_correction(double beta, const Tensor& t) { return 1.0 - ops::pow(Tensor::scalar(beta, DType::f64), t); }
}  // namespace

Tensor Adam::fused_update(size_t i, const Tensor& param, const Tensor& grad, bool decoupled) {
  Tensor& m = state(i, "exp_avg");
  Tensor& v = state(i, "exp_avg_sq");
  if (!m.defined()) m = ops::zeros_like(grad);
  if (!v.defined()) v = ops::zeros_like(grad);
  std::vector<Tensor> out = ops::adam_update(param, grad, m, v, lr_scalar(), step_scalar(),
                                             {.beta1 = opt_.beta1,
                                              .beta2 = opt_.beta2,
                                              .eps = opt_.eps,
                                              .weight_decay = opt_.weight_decay,
                                              .decoupled = decoupled});
  m = out[1];
  v = out[2];
  return out[0];
}

Tensor Adam::update(size_t i, const Tensor& param, const Tensor& grad) { return fused_update(i, param, grad, false); }

Tensor AdamW::update(size_t i, const Tensor& param, const Tensor& grad) { return fused_update(i, param, grad, true); }

Tensor RAdam::update(size_t i, const Tensor& param, const Tensor& grad) {
  const Tensor g = opt_.weight_decay != 0.0 ? grad + param * opt_.weight_decay : grad;
  update_moments(i, g);
  const Tensor t = step_scalar();
  const Tensor b2t = ops::pow(Tensor::scalar(opt_.beta2, DType::f64), t);
  const Tensor bc1 = bias_correction(opt_.beta1, t), bc2 = 1.0 - b2t;
  const double rho_inf = 2.0 / (1.0 - opt_.beta2) - 1.0;
  const Tensor rho_t = rho_inf - 2.0 * t * b2t / bc2;
  const Tensor m_hat = state(i, "exp_avg") * scalar_as(ops::reciprocal(bc1), param);
  // While rho_t <= 5 the variance is not tractable and the step is plain momentum; both branches are
  // computed as scalars and selected, so the graph does not depend on the step number.
  const Tensor tractable = ops::gt(rho_t, Tensor::scalar(5.0, DType::f64));
  const Tensor rect_sq = (rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t);
  const Tensor rect = ops::sqrt(ops::maximum(rect_sq, Tensor::scalar(0.0, DType::f64)));
  const Tensor zero = Tensor::scalar(0.0, DType::f64);
  const Tensor adaptive_coef = ops::where(tractable, lr_scalar() * rect * ops::sqrt(bc2), zero);
  const Tensor plain_coef = ops::where(tractable, zero, lr_scalar());
  // PyTorch's l_t = sqrt(1 - beta2^t) / (sqrt(v_t) + eps): eps is added before the bias correction.
  const Tensor adaptive = ops::reciprocal(ops::sqrt(state(i, "exp_avg_sq")) + opt_.eps);
  return param - m_hat * (adaptive * scalar_as(adaptive_coef, param) + scalar_as(plain_coef, param));
}

}  // namespace tessera::optim
