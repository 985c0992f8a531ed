// Losses, as composites of registered ops (gradients come from the parts). cross_entropy and nll_loss
// follow PyTorch exactly: class axis 1 (or 0 for unbatched [C] scores), ignored targets contribute
// nothing and are not counted by the mean, label smoothing mixes in the uniform distribution.
#include <cmath>

#include "tessera/ir/op_def.h"
#include "tessera/ir/origin.h"
#include "tessera/ops/ops.h"

namespace tessera::ops {

namespace {
using ir::TensorType;

std::vector<TensorType> tensor_types(const std::vector<Tensor>& ts) {
  std::vector<TensorType> out;
  for (const Tensor& t : ts) out.push_back(t.type());
  return out;
}

// f16/bf16 losses are computed in f32 and cast back, so sums and counts neither overflow nor round.
DType loss_compute_dtype(DType dt) {
  return dt == DType::f16 || dt == DType::bf16 ? DType::f32 : dt;
}

Tensor reduce_loss(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return sum(loss);
    case Reduction::Mean:
      return sum(loss) / static_cast<double>(loss.numel());  // empty: 0/0 = NaN, as PyTorch
  }
  return loss;
}

// The axis holding the classes: 1 for [N, C, d...], 0 for unbatched [C] scores.
int64_t class_axis(const Tensor& scores) {
  return scores.rank() == 1 ? 0 : 1;
}

void check_class_inputs(const std::string& op, const Tensor& scores, const Tensor& targets) {
  const std::vector<TensorType> types = tensor_types({scores, targets});
  if (!is_floating(scores.dtype()))
    ir::op_fail(op, types, "expected floating scores, got {}", dtype_name(scores.dtype()));
  if (scores.rank() < 1) ir::op_fail(op, types, "expected scores of shape [N, C, d...] or [C], got a scalar");
  if (!is_integral(targets.dtype())) {
    ir::op_fail(op, types,
                "expected integer class-index targets (i64, i32, ...), got {}; class probabilities as "
                "targets are not supported",
                dtype_name(targets.dtype()));
  }
  Shape want = scores.shape();
  want.erase(want.begin() + class_axis(scores));
  if (targets.shape() != want) {
    ir::op_fail(op, types, "targets have shape {}, expected {} (the scores' shape without the class axis)",
                shape_str(targets.shape()), shape_str(want));
  }
}

// Targets that are already known (data, not a graph) are checked here, so that a bad class index is
// reported by this op; otherwise take_along_axis bounds-checks them when the graph runs.
void check_target_values(const std::string& op, const Tensor& scores, const Tensor& targets, int64_t ignore_index) {
  if (!targets.is_evaluated()) return;
  const int64_t classes = scores.dim(class_axis(scores));
  const std::vector<int64_t> values = targets.array().to_i64();
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t t = values[i];
    if (t != ignore_index && (t < 0 || t >= classes)) {
      ir::op_fail(op, tensor_types({scores, targets}),
                  "target {} at flat position {} is out of range for {} classes (and is not ignore_index {})", t, i,
                  classes, ignore_index);
    }
  }
}

struct PickedLoss {
  Tensor nll;    // -scores at the target class, 0 where ignored; targets' shape
  Tensor valid;  // bool: target != ignore_index
};

// Negative of `scores` (log-probabilities) at each target along the class axis.
PickedLoss pick_targets(const Tensor& scores, const Tensor& targets, int64_t ignore_index) {
  const int64_t axis = class_axis(scores);
  const Tensor t = cast(targets, DType::i64);
  const Tensor valid = ne(t, Tensor::scalar(static_cast<double>(ignore_index), DType::i64));
  // Ignored positions gather class 0 (always in range) and are then zeroed.
  const Tensor safe = where(valid, t, zeros_like(t));
  const Tensor picked = squeeze(take_along_axis(scores, unsqueeze(safe, axis), axis), {axis});
  return {where(valid, neg(picked), zeros_like(picked)), valid};
}

// Mean over the targets that count; with none counting the result is 0/0 = NaN, as in PyTorch.
Tensor reduce_class_loss(const Tensor& loss, const Tensor& valid, Reduction reduction) {
  if (reduction != Reduction::Mean) return reduce_loss(loss, reduction);
  return sum(loss) / sum(cast(valid, loss.dtype()));
}

void check_reduction_inputs(const std::string& op, const Tensor& a, const Tensor& b, const char* a_name,
                            const char* b_name) {
  const std::vector<TensorType> types = tensor_types({a, b});
  if (!is_floating(a.dtype()) || !is_floating(b.dtype())) {
    ir::op_fail(op, types, "expected floating {} and {}, got {} and {}", a_name, b_name, dtype_name(a.dtype()),
                dtype_name(b.dtype()));
  }
  if (a.shape() != b.shape()) {
    ir::op_fail(op, types, "{} has shape {} but {} has shape {}; they must match", a_name, shape_str(a.shape()), b_name,
                shape_str(b.shape()));
  }
}
}  // namespace

Tensor nll_loss(const Tensor& log_probs, const Tensor& targets, Reduction reduction, int64_t ignore_index) {
  const ir::OriginScope origin("ops::nll_loss");
  check_class_inputs("nll_loss", log_probs, targets);
  check_target_values("nll_loss", log_probs, targets, ignore_index);
  const DType dt = log_probs.dtype();
  const PickedLoss p = pick_targets(cast(log_probs, loss_compute_dtype(dt)), targets, ignore_index);
  return cast(reduce_class_loss(p.nll, p.valid, reduction), dt);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  const ir::OriginScope origin("ops::cross_entropy");
  check_class_inputs("cross_entropy", logits, targets);
  const double eps = options.label_smoothing;
  if (!(eps >= 0.0 && eps <= 1.0)) {
    ir::op_fail("cross_entropy", tensor_types({logits, targets}), "label_smoothing must be in [0, 1], got {}", eps);
  }
  check_target_values("cross_entropy", logits, targets, options.ignore_index);
  const DType dt = logits.dtype();
  const int64_t axis = class_axis(logits);
  const Tensor log_probs = log_softmax(cast(logits, loss_compute_dtype(dt)), axis);
  const PickedLoss p = pick_targets(log_probs, targets, options.ignore_index);
  Tensor loss = p.nll;
  if (eps > 0.0) {
    // PyTorch: (1 - eps) * nll + eps / C * (-sum_c log p_c), the second term also zero where ignored.
    const Tensor uniform_term = neg(sum(log_probs, {axis}));
    const Tensor smooth = where(p.valid, uniform_term, zeros_like(uniform_term));
    const double classes = static_cast<double>(logits.dim(axis));
    loss = loss * (1.0 - eps) + smooth * (eps / classes);
  }
  return cast(reduce_class_loss(loss, p.valid, options.reduction), dt);
}

Tensor mse_loss(const Tensor& prediction, const Tensor& target, Reduction reduction) {
  const ir::OriginScope origin("ops::mse_loss");
  check_reduction_inputs("mse_loss", prediction, target, "prediction", "target");
  const DType dt = promote_types(prediction.dtype(), target.dtype());
  const DType ct = loss_compute_dtype(dt);
  return cast(reduce_loss(square(cast(prediction, ct) - cast(target, ct)), reduction), dt);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets, Reduction reduction) {
  const ir::OriginScope origin("ops::binary_cross_entropy_with_logits");
  check_reduction_inputs("binary_cross_entropy_with_logits", logits, targets, "logits", "targets");
  const DType dt = promote_types(logits.dtype(), targets.dtype());
  const DType ct = loss_compute_dtype(dt);
  const Tensor x = cast(logits, ct), t = cast(targets, ct);
  // Stable form max(x, 0) - x t + log1p(exp(-|x|)). `maximum` splits its gradient at x = 0, which
  // gives the exact derivative sigmoid(0) - t there (relu would give -t).
  const Tensor loss = maximum(x, zeros_like(x)) - x * t + log1p(exp(neg(abs(x))));
  return cast(reduce_loss(loss, reduction), dt);
}

}  // namespace tessera::ops
