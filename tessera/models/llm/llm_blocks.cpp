#include "tessera/models/llm/llm_blocks.h"

#include <cmath>
#include <vector>

#include "tessera/models/llm/attend.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"

namespace tessera::models::llm {

Tensor linear(const Tensor& x, const QuantWeight& w) {
  return ops::quantized_matmul(x, w.blocks, w.type);
}

Tensor linear(const Tensor& x, const QuantWeight& w, const Tensor& bias) {
  return linear(x, w) + bias;
}

Tensor embed_rows(const QuantWeight& table, const Tensor& ids) {
  // Gather the encoded rows first, then decode: a 32k-row Q4 table is never expanded to f32.
  return ops::dequantize(ops::index_select(table.blocks, 0, ids), table.type);
}

RopeTable rope_table(const Tensor& positions, int64_t n_rot, double freq_base) {
  const int64_t n = positions.dim(0), half = n_rot / 2;
  // Inverse frequencies in double, rounded once to f32 (llama.cpp accumulates them in float; the
  // difference is far below the tolerance of any quantized model).
  std::vector<float> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    inv_freq[static_cast<size_t>(i)] =
        static_cast<float>(std::pow(freq_base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot)));
  }
  const Tensor freqs = Tensor::from_vector(inv_freq, {1, half});
  const Tensor angle = ops::reshape(ops::cast(positions, DType::f32), {n, 1}) * freqs;  // [n, half]
  const Tensor sign = Tensor::from_vector<float>({-1.0f, 1.0f}, {1, 1, 1, 2});
  RopeTable t;
  t.cos = ops::reshape(ops::cos(angle), {n, 1, half, 1});
  t.sin_signed = ops::reshape(ops::sin(angle), {n, 1, half, 1}) * sign;
  t.n_rot = n_rot;
  return t;
}

Tensor rope_pairs(const Tensor& x, const RopeTable& table) {
  const int64_t n = x.dim(0), heads = x.dim(1), head_dim = x.dim(2), n_rot = table.n_rot;
  const Tensor pairs = ops::reshape(ops::slice(x, 2, 0, n_rot), {n, heads, n_rot / 2, 2});
  const Tensor rotated =
      ops::reshape(pairs * table.cos + ops::flip(pairs, {3}) * table.sin_signed, {n, heads, n_rot});
  if (n_rot == head_dim) return rotated;
  return ops::concat({rotated, ops::slice(x, 2, n_rot, head_dim)}, 2);
}

Tensor rope_pairs(const Tensor& x, const Tensor& positions, int64_t n_rot, double freq_base) {
  return rope_pairs(x, rope_table(positions, n_rot, freq_base));
}

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t n = q.dim(0), n_head = q.dim(1), d = q.dim(2);
  // sdpa wants heads before positions: [heads, n, d]; it repeats each key/value head for its group.
  const Tensor o = ops::scaled_dot_product_attention(ops::transpose(q, 0, 1), ops::transpose(k, 0, 1),
                                                     ops::transpose(v, 0, 1), Tensor(), true);
  return ops::reshape(ops::transpose(o, 0, 1), {n, n_head * d});
}

Tensor causal_attend(int64_t /*layer*/, const Tensor& q, const Tensor& k, const Tensor& v) {
  return causal_attention(q, k, v);
}

}  // namespace tessera::models::llm
