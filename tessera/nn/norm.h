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
  // Parameters weight (gamma) and bias (beta), [C] (undefined without affine); buffers running_mean
  // and running_var, [C], used in eval mode.
  Tensor weight, bias, running_mean, running_var;

 private:
  int64_t features_;
  double eps_, momentum_;
};
using BatchNorm1d = BatchNorm;  // PyTorch's name for BatchNorm over [N, C] inputs
using BatchNorm2d = BatchNorm;  // PyTorch's name for BatchNorm over [N, C, H, W] inputs

// Normalises over the trailing normalized_shape axes, with an optional affine transform.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  // The affine parameters, of normalized_shape (undefined without affine): weight starts at 1, bias at 0.
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
  Tensor weight;  // the scale, of normalized_shape, starting at 1

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
  // The per-channel affine parameters, [num_channels] (undefined without affine): weight 1, bias 0 at first.
  Tensor weight, bias;

 private:
  int64_t groups_;
  double eps_;
};

}  // namespace tessera::nn
