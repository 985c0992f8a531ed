// Scaled dot-product attention as a composite: softmax(q k^T * scale + mask) v, with boolean or
// additive masks, top-left-aligned causal masking and grouped-query heads (each key/value head serves
// Hq/Hk consecutive query heads, as PyTorch's enable_gqa).
#include <cmath>
#include <limits>

#include "tessera/ir/op_def.h"
#include "tessera/ir/origin.h"
#include "tessera/ops/ops.h"

namespace tessera::ops {

namespace {
using ir::TensorType;

constexpr const char* kAttentionOp = "scaled_dot_product_attention";

// [..., Hk, S, D] -> [..., Hk * times, S, D], each head repeated `times` times in a row.
Tensor repeat_heads(const Tensor& x, int64_t times) {
  if (times == 1) return x;
  Shape grouped = x.shape();
  grouped.insert(grouped.end() - 2, 1);
  Shape expanded = grouped;
  expanded[expanded.size() - 3] = times;
  Shape merged = x.shape();
  merged[merged.size() - 3] *= times;
  return reshape(broadcast_to(reshape(x, grouped), expanded), merged);
}

// The shape of x without its last `drop` axes.
Shape leading(const Tensor& x, int64_t drop) {
  return Shape(x.shape().begin(), x.shape().end() - drop);
}

void check_attention_inputs(const std::vector<TensorType>& types, const Tensor& q, const Tensor& k, const Tensor& v) {
  if (!is_floating(q.dtype()) || q.dtype() != k.dtype() || q.dtype() != v.dtype()) {
    ir::op_fail(kAttentionOp, types, "q, k and v must share one floating dtype, got {}, {} and {}", dtype_name(q.dtype()),
                dtype_name(k.dtype()), dtype_name(v.dtype()));
  }
  if (q.rank() < 2 || q.rank() != k.rank() || q.rank() != v.rank()) {
    ir::op_fail(kAttentionOp, types, "q, k and v must have the same rank >= 2 ([..., heads, length, dim]), got {}, {} and {}",
                q.rank(), k.rank(), v.rank());
  }
  if (q.dim(-1) != k.dim(-1)) {
    ir::op_fail(kAttentionOp, types, "q and k must have the same head dim (last axis), got {} and {}", q.dim(-1), k.dim(-1));
  }
  if (leading(k, 1) != leading(v, 1)) {
    ir::op_fail(kAttentionOp, types, "k and v must agree on every axis but the last, got {} and {}", shape_str(k.shape()),
                shape_str(v.shape()));
  }
  if (q.rank() >= 3) {
    if (leading(q, 3) != leading(k, 3)) {
      ir::op_fail(kAttentionOp, types, "q and k/v must have the same batch axes, got {} and {}", shape_str(leading(q, 3)),
                  shape_str(leading(k, 3)));
    }
    const int64_t hq = q.dim(-3), hk = k.dim(-3);
    if (hk == 0 || hq % hk != 0) {
      ir::op_fail(kAttentionOp, types, "{} query heads cannot be grouped over {} key/value heads (Hq must be a multiple of Hk)",
                  hq, hk);
    }
  }
}

// Applies the boolean (true = attend) or additive float mask to the scores.
Tensor apply_mask(const std::vector<TensorType>& types, const Tensor& scores, const Tensor& mask) {
  Shape target;
  try {
    target = broadcast_shapes(mask.shape(), scores.shape(), kAttentionOp);
  } catch (const Error&) {
    target.clear();
  }
  if (target != scores.shape()) {
    ir::op_fail(kAttentionOp, types, "mask of shape {} does not broadcast to the attention scores {}", shape_str(mask.shape()),
                shape_str(scores.shape()));
  }
  if (mask.dtype() == DType::boolean) {
    return where(mask, scores, scalar_like(scores, -std::numeric_limits<double>::infinity()));
  }
  if (!is_floating(mask.dtype())) {
    ir::op_fail(kAttentionOp, types, "mask must be bool (true = attend) or floating (added to the scores), got {}",
                dtype_name(mask.dtype()));
  }
  return scores + cast(mask, scores.dtype());
}
}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    bool is_causal, std::optional<double> scale) {
  const ir::OriginScope origin("ops::scaled_dot_product_attention");
  std::vector<TensorType> types{q.type(), k.type(), v.type()};
  if (mask.defined()) types.push_back(mask.type());
  check_attention_inputs(types, q, k, v);

  const int64_t times = q.rank() >= 3 ? q.dim(-3) / k.dim(-3) : 1;
  const Tensor keys = repeat_heads(k, times), values = repeat_heads(v, times);
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.dim(-1))));
  Tensor scores = matmul(q, transpose(keys, -2, -1)) * s;  // [..., Hq, L, S]
  if (mask.defined()) scores = apply_mask(types, scores, mask);
  if (is_causal) {
    // Top-left aligned: query i attends to keys j <= i, whatever L and S are.
    const int64_t len_q = q.dim(-2), len_k = k.dim(-2);
    const Tensor rows = reshape(arange(len_q), {len_q, 1});
    const Tensor cols = reshape(arange(len_k), {1, len_k});
    scores = where(ge(rows, cols), scores, scalar_like(scores, -std::numeric_limits<double>::infinity()));
  }
  return matmul(softmax(scores, -1), values);
}

}  // namespace tessera::ops
