// Softmax family, normalisations (inference form), Dropout (inference: the identity) and the two
// classification losses.
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/index.h"
#include "tessera/ops/nn.h"
#include "tessera/ops/reduce.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

enum class SoftmaxKind { softmax, log_softmax, hardmax };

Tensor hardmax_along(const Tensor& x, int64_t axis) {
  const Tensor index = ops::argmax(x, axis, true);
  Shape iota_shape(static_cast<size_t>(x.rank()), 1);
  iota_shape[static_cast<size_t>(axis)] = x.shape()[static_cast<size_t>(axis)];
  const Tensor iota = ops::reshape(ops::arange(x.shape()[static_cast<size_t>(axis)]), iota_shape);
  return ops::cast(ops::eq(index, iota), x.dtype());
}

Tensor apply_softmax(SoftmaxKind kind, const Tensor& x, int64_t axis) {
  switch (kind) {
    case SoftmaxKind::softmax: return ops::softmax(x, axis);
    case SoftmaxKind::log_softmax: return ops::log_softmax(x, axis);
    case SoftmaxKind::hardmax: return hardmax_along(x, axis);
  }
  return {};
}

// Version 13 normalises along one axis (default -1); earlier versions flatten the input to 2-D at
// `axis` (default 1) and normalise each row.
void add_softmax(TranslationTable& t, const char* op, SoftmaxKind kind) {
  t.add(op, {1, 11, 13}, [kind](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    if (kind != SoftmaxKind::hardmax) require_floating(c, x);
    if (c.version() >= 13) return {apply_softmax(kind, x, normalize_axis(c, c.attr_int("axis", -1), x.rank()))};
    const Tensor rows = flatten_at(c, x, c.attr_int("axis", 1));
    return {ops::reshape(apply_softmax(kind, rows, 1), x.shape())};
  });
}

// A per-channel vector [C] shaped to broadcast against [N, C, d1, ...].
Tensor per_channel(const Tensor& v, int64_t rank) {
  Shape s(static_cast<size_t>(rank), 1);
  if (rank > 1) s[1] = v.numel();
  return ops::reshape(v, s);
}

// Inference form: the given mean and variance. Training mode (version 14 on) normalises with the
// batch's statistics over every axis but the channel's (population variance) and also returns the
// updated running statistics, input * momentum + batch * (1 - momentum).
std::vector<Tensor> batch_norm(NodeContext& c) {
  const Tensor x = c.input(0);
  const double eps = c.attr_float("epsilon", 1e-5f);
  const double momentum = c.attr_float("momentum", 0.9f);
  if (c.version() < 9 && c.attr_int("spatial", 1) != 1) c.fail("spatial = 0 is not supported");
  if (c.version() < 7 && c.attr_int("is_test", 0) == 0) c.fail("is_test = 0 (training) is not supported");
  if (c.version() < 6) c.ignore_attr("consumed_inputs");
  const bool training = c.version() >= 14 && c.attr_int("training_mode", 0) != 0;
  const int64_t r = x.rank();
  const Tensor scale = per_channel(c.input(1), r), bias = per_channel(c.input(2), r);
  if (!training) {
    if (c.wants_output(1) || c.wants_output(2)) c.fail("running statistics outputs need training_mode = 1");
    const Tensor mean = per_channel(c.input(3), r), var = per_channel(c.input(4), r);
    return {(x - mean) * ops::rsqrt(var + eps) * scale + bias};
  }
  require_floating(c, x);
  ops::Axes axes{0};
  for (int64_t i = 2; i < r; ++i) axes.push_back(i);
  const Tensor mean = ops::mean(x, axes, true);
  const Tensor centered = x - mean;
  const Tensor var = ops::mean(centered * centered, axes, true);
  const Tensor y = centered * ops::rsqrt(var + eps) * scale + bias;
  const Shape channels{x.dim(1)};
  const Tensor running_mean = c.input(3) * momentum + ops::reshape(mean, channels) * (1 - momentum);
  const Tensor running_var = c.input(4) * momentum + ops::reshape(var, channels) * (1 - momentum);
  return {y, running_mean, running_var};
}

std::vector<Tensor> instance_norm(NodeContext& c) {
  const Tensor x = c.input(0);
  require_floating(c, x);
  const double eps = c.attr_float("epsilon", 1e-5f);
  ops::Axes axes;
  for (int64_t i = 2; i < x.rank(); ++i) axes.push_back(i);
  const Tensor mean = ops::mean(x, axes, true);
  const Tensor centered = x - mean;
  const Tensor var = ops::mean(centered * centered, axes, true);
  return {centered * ops::rsqrt(var + eps) * per_channel(c.input(1), x.rank()) + per_channel(c.input(2), x.rank())};
}

// GroupNormalization-18: statistics over each group of num_groups consecutive channels (and every
// spatial position); scale and bias have one entry per group in this version (21 made them per channel).
std::vector<Tensor> group_norm(NodeContext& c) {
  const Tensor x = c.input(0);
  require_floating(c, x);
  if (x.rank() < 2) c.fail("X has rank {}, expected at least 2 (N, C, ...)", x.rank());
  const int64_t groups = c.required_int("num_groups");
  const int64_t n = x.shape()[0], channels = x.shape()[1];
  if (groups <= 0 || channels % groups != 0) c.fail("num_groups {} does not divide the {} channels", groups, channels);
  const double eps = c.attr_float("epsilon", 1e-5f);
  const Tensor grouped = ops::reshape(x, {n, groups, -1});
  const Tensor mean = ops::mean(grouped, {2}, true);
  const Tensor centered = grouped - mean;
  const Tensor var = ops::mean(centered * centered, {2}, true);
  auto per_group = [&](size_t i, const char* what) {
    const Tensor v = c.input(i);
    if (v.shape() != Shape{groups}) c.fail("{} has shape {}, expected [{}] (one per group)", what, shape_str(v.shape()), groups);
    return ops::reshape(v, {1, groups, 1});
  };
  const Tensor y = centered * ops::rsqrt(var + eps) * per_group(1, "scale") + per_group(2, "bias");
  return {ops::reshape(y, x.shape())};
}

// LayerNormalization-17: statistics over the axes from `axis` on, computed in f32 for 16-bit inputs
// (stash_type 1); outputs Y and, when asked for, Mean and InvStdDev with the reduced axes kept.
std::vector<Tensor> layer_norm(NodeContext& c) {
  const Tensor input = c.input(0);
  require_floating(c, input);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", -1), input.rank());
  const double eps = c.attr_float("epsilon", 1e-5f);
  if (c.attr_int("stash_type", 1) != 1) c.fail("stash_type {} is not supported (1 is)", c.attr_int("stash_type", 1));
  const bool widen = input.dtype() == DType::f16 || input.dtype() == DType::bf16;
  const Tensor x = widen ? ops::cast(input, DType::f32) : input;
  ops::Axes axes;
  for (int64_t i = axis; i < x.rank(); ++i) axes.push_back(i);
  const Tensor mean = ops::mean(x, axes, true);
  const Tensor centered = x - mean;
  const Tensor inv_std = ops::rsqrt(ops::mean(centered * centered, axes, true) + eps);
  Tensor y = ops::cast(centered * inv_std, input.dtype()) * c.input(1);
  if (c.has_input(2)) y = y + c.input(2);
  return {y, mean, inv_std};
}

std::vector<Tensor> mean_variance_norm(NodeContext& c) {
  const Tensor x = c.input(0);
  require_floating(c, x);
  const ops::Axes axes = normalize_axes(c, c.attr_ints("axes", {0, 2, 3}), x.rank());
  const Tensor centered = x - ops::mean(x, axes, true);
  const Tensor std_dev = ops::sqrt(ops::mean(centered * centered, axes, true));
  return {centered / (std_dev + 1e-9)};
}

// LRN: each channel divided by (bias + alpha / size * sum of squares over a window of channels)^beta.
std::vector<Tensor> lrn(NodeContext& c) {
  const Tensor x = c.input(0);
  require_floating(c, x);
  const int64_t size = c.required_int("size");
  const double alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f), bias = c.attr_float("bias", 1.0);
  if (size < 1) c.fail("size is {}, expected at least 1", size);
  if (x.rank() < 3) c.fail("input has rank {}, expected at least 3", x.rank());
  const int64_t channels = x.dim(1);
  const double scale = alpha / static_cast<double>(size);
  // A window wider than twice the channels covers all of them at every channel.
  if (size > 2 * channels) return {x / ops::pow(ops::sum(x * x, {1}, true) * scale + bias, beta)};
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<std::pair<int64_t, int64_t>> widths(static_cast<size_t>(x.rank()), {0, 0});
  widths[1] = {before, after};
  const Tensor squares = ops::pad(x * x, widths);
  Tensor sum = ops::slice(squares, 1, 0, channels);
  for (int64_t k = 1; k < size; ++k) sum = sum + ops::slice(squares, 1, k, k + channels);
  return {x / ops::pow(sum * scale + bias, beta)};
}

// Dropout outside training is the identity (mask all true); in training mode only ratio 0 is, and other
// ratios (random masks) are refused.
std::vector<Tensor> dropout(NodeContext& c) {
  const Tensor x = c.input(0);
  c.ignore_attr("seed");
  if (c.version() < 12) {
    c.ignore_attr("ratio");  // has no effect outside training
    if (c.version() < 7 && c.attr_int("is_test", 0) == 0) c.fail("is_test = 0 (training) is not supported");
  } else if (c.has_input(2)) {
    const std::vector<double> training = c.constant_doubles(2, "training_mode");
    if (training.size() != 1) c.fail("training_mode has {} elements, expected one", training.size());
    const double ratio = c.has_input(1) ? c.constant_doubles(1, "ratio").at(0) : 0.5;
    if (training[0] != 0 && ratio != 0) c.fail("training_mode = true with ratio {} (a random mask) is not supported", ratio);
  }
  return {x, ops::ones(x.shape(), DType::boolean)};
}

// NegativeLogLikelihoodLoss over input [N, C, d...] and target [N, d...]: -input[n, target, d...] times
// the class weight, zero where target == ignore_index; "mean" divides by the summed weights.
Tensor nll_loss(NodeContext& c, const Tensor& input, const Tensor& target, const Tensor& weight,
                const std::string& reduction) {
  if (input.rank() < 2 || target.rank() != input.rank() - 1) {
    c.fail("input has rank {} and target rank {}, expected [N, C, d...] and [N, d...]", input.rank(), target.rank());
  }
  const bool has_ignore = c.has_attr("ignore_index");
  const int64_t ignore = c.attr_int("ignore_index", 0);
  const Tensor keep = has_ignore ? ops::ne(target, scalar_as(target, static_cast<double>(ignore)))
                                 : ops::ones(target.shape(), DType::boolean);
  // Ignored targets may be out of range; they gather class 0 and are masked out.
  const Tensor safe = ops::where(keep, target, scalar_as(target, 0.0));
  const Tensor picked = ops::squeeze(ops::take_along_axis(input, ops::unsqueeze(safe, 1), 1), {1});
  const Tensor zero = scalar_as(picked, 0.0);
  Tensor w = ops::where(keep, ops::ones(target.shape(), input.dtype()), zero);
  if (weight.defined()) {
    const Tensor class_weight = ops::reshape(ops::index_select(weight, 0, ops::reshape(safe, {-1})), target.shape());
    w = ops::where(keep, class_weight, zero);
  }
  const Tensor loss = -picked * w;
  if (reduction == "none") return loss;
  if (reduction == "sum") return ops::sum(loss);
  if (reduction == "mean") return ops::sum(loss) / ops::sum(w);
  c.fail("reduction {} is not none, sum or mean", reduction);
}

std::vector<Tensor> negative_log_likelihood(NodeContext& c) {
  const Tensor weight = c.has_input(2) ? c.input(2) : Tensor();
  return {nll_loss(c, c.input(0), c.input(1), weight, c.attr_string("reduction", "mean"))};
}

std::vector<Tensor> softmax_cross_entropy(NodeContext& c) {
  const Tensor scores = c.input(0);
  require_floating(c, scores, "scores");
  const Tensor log_prob = ops::log_softmax(scores, 1);
  const Tensor weight = c.has_input(2) ? c.input(2) : Tensor();
  return {nll_loss(c, log_prob, c.input(1), weight, c.attr_string("reduction", "mean")), log_prob};
}

}  // namespace

void add_nn_translations(TranslationTable& t) {
  add_softmax(t, "Softmax", SoftmaxKind::softmax);
  add_softmax(t, "LogSoftmax", SoftmaxKind::log_softmax);
  add_softmax(t, "Hardmax", SoftmaxKind::hardmax);
  t.add("BatchNormalization", {1, 6, 7, 9, 14, 15}, 6, batch_norm);
  t.add("InstanceNormalization", {1, 6}, 6, instance_norm);
  t.add("GroupNormalization", {18}, group_norm);
  t.add("LayerNormalization", {17}, layer_norm);
  t.add("MeanVarianceNormalization", {9, 13}, mean_variance_norm);
  t.add("LRN", {1, 13}, lrn);
  t.add("Dropout", {1, 6, 7, 10, 12, 13}, 6, dropout);
  t.add("NegativeLogLikelihoodLoss", {12, 13}, negative_log_likelihood);
  t.add("SoftmaxCrossEntropyLoss", {12, 13}, softmax_cross_entropy);
}

}  // namespace tessera::io::onnx
