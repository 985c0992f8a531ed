#pragma once
// Neural-network functions: activations with normalisation, losses, normalisation layers, attention.
#include <optional>

#include "tessera/api/tensor.h"
#include "tessera/ops/random.h"

namespace tessera::ops {

// How a loss combines its per-element values: None keeps them (same shape as the targets), Mean
// averages, Sum adds (both give a scalar), as PyTorch's reduction='none'|'mean'|'sum'.
enum class Reduction { None, Mean, Sum };

// exp(x) / sum(exp(x)) along `axis` (negative counts from the end), computed stably (max subtracted).
Tensor softmax(const Tensor& x, int64_t axis = -1);
// log(softmax(x)) along `axis`, computed as x - max - log(sum(exp(x - max))) so it does not underflow.
Tensor log_softmax(const Tensor& x, int64_t axis = -1);

// cross_entropy's options, as PyTorch's keyword arguments.
struct CrossEntropyOptions {
  Reduction reduction = Reduction::Mean;  // how per-target losses combine
  int64_t ignore_index = -100;   // targets equal to this contribute nothing (and are not counted)
  double label_smoothing = 0.0;  // in [0, 1]
};
// logits [N, C] (or [N, C, d...]) and integer class targets [N] (or [N, d...]). As PyTorch (checked
// against 1.13): with smoothing eps each counted target's loss is
//   (1 - eps) * (-log p[target]) + (eps / C) * sum_c (-log p[c]),
// i.e. the target distribution (1 - eps) one_hot + eps / C. Targets equal to ignore_index add 0 to both
// terms and are left out of the mean's denominator (mean = sum / number of targets not ignored; all
// ignored gives 0 / 0 = NaN, Sum gives 0).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options = {});
// Negative log-likelihood of log-probabilities [N, C] at integer targets [N].
Tensor nll_loss(const Tensor& log_probs, const Tensor& targets, Reduction reduction = Reduction::Mean,
                int64_t ignore_index = -100);
// prediction and target (and logits and targets below) must be floating and of the same shape.
Tensor mse_loss(const Tensor& prediction, const Tensor& target, Reduction reduction = Reduction::Mean);
// -(t * log(sigmoid(z)) + (1 - t) * log(1 - sigmoid(z))) per element, computed stably from the logits z.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets,
                                        Reduction reduction = Reduction::Mean);

// Normalises over the trailing axes given by normalized_shape; weight/bias optional (undefined Tensor).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// x / sqrt(mean(x^2) + eps) * weight. eps defaults to the machine epsilon of x's dtype (f32 1.19e-7,
// f64 2.2e-16), as PyTorch's F.rms_norm / nn.RMSNorm with eps=None (checked against PyTorch 2.11); f16
// and bf16 compute in f32 and take f32's epsilon, as PyTorch does. The default was 1e-6 before; models
// trained with an explicit eps (1e-5, 1e-6) pass it.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
// The eps rms_norm uses when none is given, for inputs of dtype `dt`.
double default_rms_norm_eps(DType dt);

// Batch norm over all axes but axis 1 (channels). In training it uses batch statistics and returns
// updated running statistics; in inference it uses the running statistics, which it returns as given.
// weight/bias are optional; running_mean/running_var may be undefined in training (the result's are then
// undefined too). The running update uses the unbiased batch variance, as PyTorch.
struct BatchNormResult {
  Tensor output;        // the normalised x, of x's shape
  Tensor running_mean;  // [C]: updated in training, as given in inference
  Tensor running_var;   // [C]: updated in training, as given in inference
};
// See BatchNormResult: momentum weighs the new batch statistic (PyTorch's convention), eps joins the variance.
BatchNormResult batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                           const Tensor& bias, bool training, double momentum = 0.1, double eps = 1e-5);
// Normalises x [N, C, ...] over each of num_groups groups of C / num_groups channels (and the spatial axes),
// then applies per-channel weight/bias [C] when given (PyTorch's F.group_norm).
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);

// Zeroes each element with probability p and scales the rest by 1/(1-p) when training.
Tensor dropout(const Tensor& x, double p, bool training, Generator& generator);
Tensor dropout(const Tensor& x, double p, bool training = true);  // default generator

// Rows of `weight` [num_embeddings, dim] picked by integer `indices` -> [..., dim]. Argument order:
// weight first, unlike PyTorch's F.embedding(input, weight).
Tensor embedding(const Tensor& weight, const Tensor& indices);

// softmax(q k^T * scale + mask) v over the last two axes. q [..., Hq, L, D], k/v [..., Hk, S, D]; when
// Hq is a multiple of Hk each group of Hq/Hk consecutive query heads shares one key/value head (GQA):
// query head h reads key/value head h / (Hq / Hk), as PyTorch's enable_gqa (k and v repeat_interleave'd,
// not tiled: with Hq = 4, Hk = 2, heads 0 and 1 read kv head 0, heads 2 and 3 kv head 1). mask is
// boolean (true = attend) or additive float, broadcastable to [..., Hq, L, S]. scale defaults to
// 1/sqrt(D). Batch axes (before the heads) must be equal in q, k and v; v may have its own last dim.
// is_causal lets query i attend to keys j <= i (top-left aligned); it may be combined with a mask.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = {},
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

// Attention of m new queries over a key/value cache, the decode step of a language model: q [m, Hq, D],
// k [S, Hk, D] and v [S, Hk, Dv] (one row per cache position, GQA as above), positions (i32/i64 [m]);
// query i attends to rows 0..positions[i] only, so rows past the written ones are never read. Returns
// [m, Hq, Dv] in q's dtype; k and v may be narrower (an f16 cache with f32 queries). scale defaults to
// 1/sqrt(D). A position outside 0..S-1 raises tessera::Error when run.
Tensor kv_cache_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& positions,
                          std::optional<double> scale = std::nullopt);

}  // namespace tessera::ops
