// Normalisation layers as composites of elementwise ops and `sum` (their gradients, of any order, come
// from the parts). Statistics use the biased variance; f16/bf16 inputs are normalised in f32.
#include <limits>

#include "tessera/ir/op_def.h"
#include "tessera/ir/origin.h"
#include "tessera/ops/ops.h"

namespace tessera::ops {

namespace {
using ir::TensorType;

std::vector<TensorType> defined_tensor_types(const std::vector<Tensor>& ts) {
  std::vector<TensorType> out;
  for (const Tensor& t : ts) {
    if (t.defined()) out.push_back(t.type());
  }
  return out;
}

DType norm_compute_dtype(DType dt) {
  return dt == DType::f16 || dt == DType::bf16 ? DType::f32 : dt;
}

struct Moments {
  Tensor centered;  // x - mean
  Tensor mean;      // keepdims
  Tensor var;       // biased, keepdims
  int64_t count;    // elements per statistic
};

Moments moments(const Tensor& x, const Axes& axes) {
  int64_t count = 1;
  for (int64_t a : axes) count *= x.dim(a);
  const double inv = 1.0 / static_cast<double>(count);
  const Tensor mu = sum(x, axes, true) * inv;
  const Tensor centered = x - mu;
  return {centered, mu, sum(square(centered), axes, true) * inv, count};
}

Axes trailing_axes(int64_t rank, size_t k) {
  Axes axes;
  for (int64_t d = rank - static_cast<int64_t>(k); d < rank; ++d) axes.push_back(d);
  return axes;
}

// Checks x's trailing axes and the optional affine parameters against normalized_shape.
void check_normalized_shape(const std::string& op, const Tensor& x, const Shape& normalized_shape,
                            const std::vector<std::pair<const char*, Tensor>>& params) {
  std::vector<Tensor> all{x};
  for (const auto& p : params) all.push_back(p.second);
  const std::vector<TensorType> types = defined_tensor_types(all);
  if (!is_floating(x.dtype())) ir::op_fail(op, types, "expected a floating input, got {}", dtype_name(x.dtype()));
  const auto k = static_cast<int64_t>(normalized_shape.size());
  if (k == 0) ir::op_fail(op, types, "normalized_shape must name at least one axis");
  const Shape tail = x.rank() >= k ? Shape(x.shape().end() - k, x.shape().end()) : Shape{};
  if (x.rank() < k || tail != normalized_shape) {
    ir::op_fail(op, types, "normalized_shape {} does not match the trailing axes of the input {}",
                shape_str(normalized_shape), shape_str(x.shape()));
  }
  for (const auto& [name, p] : params) {
    if (!p.defined()) continue;
    if (!is_floating(p.dtype())) ir::op_fail(op, types, "{} must be floating, got {}", name, dtype_name(p.dtype()));
    if (p.shape() != normalized_shape) {
      ir::op_fail(op, types, "{} has shape {}, expected normalized_shape {}", name, shape_str(p.shape()),
                  shape_str(normalized_shape));
    }
  }
}

// Per-channel parameters [C] of a [N, C, ...] input, checked and reshaped to [1, C, 1, ...].
Tensor channel_param(const std::string& op, const std::vector<TensorType>& types, const char* name, const Tensor& p,
                     const Tensor& x, DType ct) {
  if (!p.defined()) return p;
  const int64_t channels = x.dim(1);
  if (!is_floating(p.dtype())) ir::op_fail(op, types, "{} must be floating, got {}", name, dtype_name(p.dtype()));
  if (p.shape() != Shape{channels}) {
    ir::op_fail(op, types, "{} has shape {}, expected [{}] (one value per channel)", name, shape_str(p.shape()),
                channels);
  }
  Shape shape(static_cast<size_t>(x.rank()), 1);
  shape[1] = channels;
  return reshape(cast(p, ct), shape);
}

Tensor affine(Tensor y, const Tensor& weight, const Tensor& bias) {
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

void check_channels_input(const std::string& op, const std::vector<TensorType>& types, const Tensor& x) {
  if (!is_floating(x.dtype())) ir::op_fail(op, types, "expected a floating input, got {}", dtype_name(x.dtype()));
  if (x.rank() < 2) ir::op_fail(op, types, "expected an input of shape [N, C, ...] (rank >= 2), got rank {}", x.rank());
}
}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const ir::OriginScope origin("ops::layer_norm");
  check_normalized_shape("layer_norm", x, normalized_shape, {{"weight", weight}, {"bias", bias}});
  const DType ct = norm_compute_dtype(x.dtype());
  const Moments m = moments(cast(x, ct), trailing_axes(x.rank(), normalized_shape.size()));
  const Tensor y = m.centered * rsqrt(m.var + eps);
  return cast(affine(y, weight.defined() ? cast(weight, ct) : weight, bias.defined() ? cast(bias, ct) : bias),
              x.dtype());
}

double default_rms_norm_eps(DType dt) {
  // PyTorch takes std::numeric_limits<opmath_t>::epsilon(): the compute type's, f32 for f16 and bf16.
  return norm_compute_dtype(dt) == DType::f64 ? std::numeric_limits<double>::epsilon()
                                              : static_cast<double>(std::numeric_limits<float>::epsilon());
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  const ir::OriginScope origin("ops::rms_norm");
  check_normalized_shape("rms_norm", x, normalized_shape, {{"weight", weight}});
  const DType ct = norm_compute_dtype(x.dtype());
  const Tensor xc = cast(x, ct);
  const Axes axes = trailing_axes(x.rank(), normalized_shape.size());
  const double inv_count = 1.0 / static_cast<double>(shape_numel(normalized_shape));
  const double e = eps.value_or(default_rms_norm_eps(x.dtype()));
  const Tensor y = xc * rsqrt(sum(square(xc), axes, true) * inv_count + e);
  return cast(affine(y, weight.defined() ? cast(weight, ct) : weight, Tensor()), x.dtype());
}

BatchNormResult batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                           const Tensor& bias, bool training, double momentum, double eps) {
  const std::string op = "batch_norm";
  const std::vector<TensorType> types = defined_tensor_types({x, running_mean, running_var, weight, bias});
  check_channels_input(op, types, x);
  const DType ct = norm_compute_dtype(x.dtype());
  const Tensor w = channel_param(op, types, "weight", weight, x, ct);
  const Tensor b = channel_param(op, types, "bias", bias, x, ct);
  const Tensor rm = channel_param(op, types, "running_mean", running_mean, x, ct);
  const Tensor rv = channel_param(op, types, "running_var", running_var, x, ct);
  if (running_mean.defined() != running_var.defined()) {
    ir::op_fail(op, types, "running_mean and running_var must be given together");
  }
  const Tensor xc = cast(x, ct);
  if (!training) {
    if (!running_mean.defined()) ir::op_fail(op, types, "inference (training = false) needs running statistics");
    const Tensor y = (xc - rm) * rsqrt(rv + eps);
    return {cast(affine(y, w, b), x.dtype()), running_mean, running_var};
  }

  Axes axes{0};
  for (int64_t d = 2; d < x.rank(); ++d) axes.push_back(d);
  const Moments m = moments(xc, axes);
  if (m.count <= 1) {
    ir::op_fail(op, types, "training needs more than one value per channel, got {}", m.count);
  }
  const Tensor y = m.centered * rsqrt(m.var + eps);
  BatchNormResult result{cast(affine(y, w, b), x.dtype()), Tensor(), Tensor()};
  if (running_mean.defined()) {
    // As PyTorch: the running variance is updated with the unbiased batch variance; the update is
    // bookkeeping, not part of the differentiated computation.
    const int64_t channels = x.dim(1);
    const double unbias = static_cast<double>(m.count) / static_cast<double>(m.count - 1);
    const Tensor batch_mean = cast(reshape(stop_gradient(m.mean), {channels}), running_mean.dtype());
    const Tensor batch_var = cast(reshape(stop_gradient(m.var), {channels}) * unbias, running_var.dtype());
    result.running_mean = running_mean * (1.0 - momentum) + batch_mean * momentum;
    result.running_var = running_var * (1.0 - momentum) + batch_var * momentum;
  }
  return result;
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  const ir::OriginScope origin("ops::group_norm");
  const std::string op = "group_norm";
  const std::vector<TensorType> types = defined_tensor_types({x, weight, bias});
  check_channels_input(op, types, x);
  const int64_t channels = x.dim(1);
  if (num_groups <= 0 || channels % num_groups != 0) {
    ir::op_fail(op, types, "{} channels cannot be split into {} groups (num_groups must be positive and divide C)",
                channels, num_groups);
  }
  const DType ct = norm_compute_dtype(x.dtype());
  const Tensor w = channel_param(op, types, "weight", weight, x, ct);
  const Tensor b = channel_param(op, types, "bias", bias, x, ct);
  // [N, C, ...] -> [N, G, C/G * prod(...)]: each group's statistics are over one row.
  int64_t per_group = channels / num_groups;
  for (int64_t d = 2; d < x.rank(); ++d) per_group *= x.dim(d);
  const int64_t n = x.dim(0);
  const Moments m = moments(reshape(cast(x, ct), {n, num_groups, per_group}), {2});
  const Tensor y = reshape(m.centered * rsqrt(m.var + eps), x.shape());
  return cast(affine(y, w, b), x.dtype());
}

}  // namespace tessera::ops
