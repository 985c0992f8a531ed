#include "tessera/optim/sgd.h"

#include "tessera/ops/ops.h"

namespace tessera::optim {

namespace {
void validate(const SGDOptions& o) {
  TESSERA_CHECK(o.momentum >= 0.0, "sgd: momentum must be non-negative, got {}", o.momentum);
  TESSERA_CHECK(o.weight_decay >= 0.0, "sgd: weight_decay must be non-negative, got {}", o.weight_decay);
  TESSERA_CHECK(!o.nesterov || (o.momentum > 0.0 && o.dampening == 0.0),
                "sgd: nesterov needs momentum > 0 and dampening = 0");
}
}  // namespace

SGD::SGD(std::vector<Tensor*> params, SGDOptions options) : Optimizer(std::move(params), options.lr), opt_(options) {
  validate(opt_);
}
SGD::SGD(nn::Module& model, SGDOptions options) : Optimizer(model, options.lr), opt_(options) { validate(opt_); }

std::vector<std::string> SGD::slots() const {
  if (opt_.momentum == 0.0) return {};
  return {"momentum_buffer"};
}

Tensor SGD::update(size_t i, const Tensor& param, const Tensor& grad) {
  Tensor g = grad;
  if (opt_.weight_decay != 0.0) g = g + param * opt_.weight_decay;
  if (opt_.momentum != 0.0) {
    Tensor buf = has_state(i, "momentum_buffer") ? state(i, "momentum_buffer") * opt_.momentum + g * (1.0 - opt_.dampening)
                                                 : g;
    state(i, "momentum_buffer") = buf;
    g = opt_.nesterov ? g + buf * opt_.momentum : buf;
  }
  return param - g * scalar_as(lr_scalar(), param);
}

}  // namespace tessera::optim
