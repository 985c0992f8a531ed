#pragma once
// Adam, AdamW (decoupled weight decay) and RAdam (rectified Adam), with PyTorch's update rules.
#include "tessera/optim/optimizer.h"

namespace tessera::optim {

// Adam's hyperparameters, PyTorch's defaults.
struct AdamOptions {
  double lr = 1e-3;      // learning rate
  double beta1 = 0.9;    // decay of the running mean of gradients (first moment)
  double beta2 = 0.999;  // decay of the running mean of squared gradients (second moment)
  double eps = 1e-8;     // added to the second moment's square root, for stability
  double weight_decay = 0.0;  // Adam/RAdam: L2 added to the gradient; AdamW: decoupled decay
};

// Adam (Kingma & Ba), as PyTorch's torch.optim.Adam.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor*> params, AdamOptions options);
  Adam(nn::Module& model, AdamOptions options);
  std::string name() const override { return "adam"; }

 protected:
  // For the variants: `what` names the optimiser in option errors.
  Adam(std::vector<Tensor*> params, AdamOptions options, const char* what);
  Adam(nn::Module& model, AdamOptions options, const char* what);
  Tensor update(size_t i, const Tensor& param, const Tensor& grad) override;
  std::vector<std::string> slots() const override { return {"exp_avg", "exp_avg_sq"}; }
  // The moment updates (RAdam), and the whole Adam/AdamW step as one adam_update op.
  void update_moments(size_t i, const Tensor& grad);
  Tensor fused_update(size_t i, const Tensor& param, const Tensor& grad, bool decoupled);  // see above
  AdamOptions opt_;  // the hyperparameters, validated by the constructor
};

// AdamW's options: Adam's, with PyTorch's default decoupled weight decay of 0.01.
struct AdamWOptions {
  double lr = 1e-3;            // learning rate
  double beta1 = 0.9;          // as AdamOptions::beta1
  double beta2 = 0.999;        // as AdamOptions::beta2
  double eps = 1e-8;           // as AdamOptions::eps
  double weight_decay = 0.01;  // decoupled: each step multiplies the parameter by (1 - lr * weight_decay)
  // The same values as AdamOptions (what the Adam base class keeps).
  AdamOptions adam() const { return {lr, beta1, beta2, eps, weight_decay}; }
};

// Adam with decoupled weight decay (Loshchilov & Hutter), as PyTorch's torch.optim.AdamW.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor*> params, AdamWOptions options = {});
  AdamW(nn::Module& model, AdamWOptions options = {});
  std::string name() const override { return "adamw"; }

 protected:
  Tensor update(size_t i, const Tensor& param, const Tensor& grad) override;
};

// Rectified Adam (Liu et al.), as PyTorch's torch.optim.RAdam.
class RAdam : public Adam {
 public:
  RAdam(std::vector<Tensor*> params, AdamOptions options) : Adam(std::move(params), options, "radam") {}
  RAdam(nn::Module& model, AdamOptions options) : Adam(model, options, "radam") {}
  std::string name() const override { return "radam"; }

 protected:
  Tensor update(size_t i, const Tensor& param, const Tensor& grad) override;
};

}  // namespace tessera::optim
