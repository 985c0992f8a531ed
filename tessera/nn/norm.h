#pragma once
// Normalisation modules. BatchNorm keeps running statistics as buffers; in training mode each forward
// replaces them with lazily computed updates (materialize() or an optimiser step evaluates them).
#include <optional>

#include "tessera/nn/module.h"

namespace tessera::nn {

// Batch normalisation over axis 1 with running statistics, as PyTorch's BatchNorm1d/2d.
class BatchNorm : public Module {
 public:
  // Normalises axis 1 of [N, C] (BatchNorm1d) or [N, C, H, W] (BatchNorm2d) inputs.
  BatchNorm(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  Tensor weight, bias, running_mean, running_var;

 private:
  int64_t features_;
  double eps_, momentum_;
};
using BatchNorm1d = BatchNorm;
using BatchNorm2d = BatchNorm;

// Normalises over the trailing normalized_shape axes, with an optional affine transform.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  Tensor weight, bias;

 private:
  Shape shape_;
  double eps_;
};

// eps defaults to the input dtype's machine epsilon, as PyTorch's nn.RMSNorm(eps=None) (ops::rms_norm).
class RMSNorm : public Module {
 public:
  explicit RMSNorm(Shape normalized_shape, std::optional<double> eps = std::nullopt);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  Tensor weight;

 private:
  Shape shape_;
  std::optional<double> eps_;
};

// Normalises each of num_groups channel groups, as PyTorch's nn.GroupNorm.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  Tensor weight, bias;

 private:
  int64_t groups_;
  double eps_;
};

}  // namespace tessera::nn
