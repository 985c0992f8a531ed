#pragma once
// The pieces both architectures are made of, as ops on Tensors: products with GGUF-encoded weights,
// embedding lookups in encoded tables, llama.cpp's RoPE and causal grouped-query attention.
#include <cstdint>

#include "tessera/api/tensor.h"
#include "tessera/models/llm/gguf_weights.h"

namespace tessera::models::llm {

// x [..., cols] · Wᵀ -> [..., rows], on the weight's own encoding.
Tensor linear(const Tensor& x, const QuantWeight& w);
Tensor linear(const Tensor& x, const QuantWeight& w, const Tensor& bias);

// Rows `ids` (integer [n]) of the table, decoded to f32 [n, cols]: only the rows used are decoded.
Tensor embed_rows(const QuantWeight& table, const Tensor& ids);

// Rotary position embedding, llama.cpp's mode 0 ("normal"): within each head of x [n, heads, head_dim]
// the pairs (x[2i], x[2i+1]) with 2i < n_rot turn by the angle pos * base^(-2i / n_rot); values past
// n_rot pass through. `positions` is integer [n].
Tensor rope_pairs(const Tensor& x, const Tensor& positions, int64_t n_rot, double freq_base);

// The cosines and signed sines of those angles, made once per forward and shared by every layer's q and
// k: cos [n, 1, n_rot / 2, 1] and sin_signed [n, 1, n_rot / 2, 2] = (-sin, sin).
struct RopeTable {
  Tensor cos, sin_signed;
  int64_t n_rot = 0;
};
RopeTable rope_table(const Tensor& positions, int64_t n_rot, double freq_base);
// Each pair (a, b) becomes (a cos - b sin, b cos + a sin) = pair * cos + flip(pair) * (-sin, sin): only
// elementwise ops and views, so the whole rotation is one generated kernel.
Tensor rope_pairs(const Tensor& x, const RopeTable& table);

// Causal attention of q [n, n_head, d] over k, v [n, n_head_kv, d] (query head h reads key/value head
// h / (n_head / n_head_kv)), scaled by 1/sqrt(d); returns [n, n_head * d].
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v);

}  // namespace tessera::models::llm
