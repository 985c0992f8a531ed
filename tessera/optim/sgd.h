#pragma once
#include "tessera/optim/optimizer.h"

namespace tessera::optim {

// SGD's hyperparameters, PyTorch's defaults.
struct SGDOptions {
  double lr = 0.01;         // learning rate: param -= lr * update
  double momentum = 0.0;    // 0: plain SGD, no momentum buffer
  double dampening = 0.0;   // scales down the gradient's share of the momentum buffer
  double weight_decay = 0.0;  // L2 penalty added to the gradient
  bool nesterov = false;    // Nesterov momentum (needs momentum > 0 and dampening 0, as PyTorch)
};

// PyTorch's SGD: buf = momentum * buf + (1 - dampening) * g (buf = g on the first step);
// update = nesterov ? g + momentum * buf : buf.
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor*> params, SGDOptions options);
  SGD(nn::Module& model, SGDOptions options);
  std::string name() const override { return "sgd"; }

 protected:
  Tensor update(size_t i, const Tensor& param, const Tensor& grad) override;
  std::vector<std::string> slots() const override;

 private:
  SGDOptions opt_;
};

}  // namespace tessera::optim
