#include "tessera/nn/norm.h"

#include "tessera/nn/init.h"
#include "tessera/ops/ops.h"

namespace tessera::nn {

BatchNorm::BatchNorm(int64_t num_features, double eps, double momentum, bool affine)
    : features_(num_features), eps_(eps), momentum_(momentum) {
  TESSERA_CHECK(num_features > 0, "BatchNorm: num_features must be positive, got {}", num_features);
  if (affine) {
    weight = init::ones({num_features});
    bias = init::zeros({num_features});
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
  running_mean = init::zeros({num_features});
  running_var = init::ones({num_features});
  register_buffer("running_mean", &running_mean);
  register_buffer("running_var", &running_var);
}

Tensor BatchNorm::forward(const Tensor& x) {
  ops::BatchNormResult r =
      ops::batch_norm(x, running_mean, running_var, weight, bias, is_training(), momentum_, eps_);
  if (is_training()) {
    running_mean = ops::stop_gradient(r.running_mean);
    running_var = ops::stop_gradient(r.running_var);
  }
  return r.output;
}

std::string BatchNorm::name() const { return fmt::format("BatchNorm({})", features_); }

LayerNorm::LayerNorm(Shape normalized_shape, double eps, bool affine) : shape_(std::move(normalized_shape)), eps_(eps) {
  if (affine) {
    weight = init::ones(shape_);
    bias = init::zeros(shape_);
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
}

Tensor LayerNorm::forward(const Tensor& x) { return ops::layer_norm(x, shape_, weight, bias, eps_); }
std::string LayerNorm::name() const { return fmt::format("LayerNorm({})", shape_str(shape_)); }

RMSNorm::RMSNorm(Shape normalized_shape, std::optional<double> eps) : shape_(std::move(normalized_shape)), eps_(eps) {
  weight = init::ones(shape_);
  register_parameter("weight", &weight);
}

Tensor RMSNorm::forward(const Tensor& x) { return ops::rms_norm(x, shape_, weight, eps_); }
std::string RMSNorm::name() const { return fmt::format("RMSNorm({})", shape_str(shape_)); }

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : groups_(num_groups), eps_(eps) {
  TESSERA_CHECK(num_groups > 0 && num_channels % num_groups == 0,
                "GroupNorm: {} channels cannot be split into {} groups", num_channels, num_groups);
  if (affine) {
    weight = init::ones({num_channels});
    bias = init::zeros({num_channels});
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
}

Tensor GroupNorm::forward(const Tensor& x) { return ops::group_norm(x, groups_, weight, bias, eps_); }
std::string GroupNorm::name() const { return fmt::format("GroupNorm({})", groups_); }

}  // namespace tessera::nn
