#include "tessera/models/llm/llama.h"

#include <fmt/format.h>

#include "tessera/models/llm/llm_blocks.h"
#include "tessera/ops/ops.h"

namespace tessera::models::llm {

LlamaWeights load_llama(const io::gguf::Reader& file, const LlmConfig& c, bool stack_projections) {
  const WeightLoader load(file, "llama");
  const int64_t q_width = c.n_head * c.head_dim, kv_width = c.n_head_kv * c.head_dim;
  LlamaWeights w;
  w.config = c;
  w.token_embd = load.matrix("token_embd.weight", c.n_vocab, c.n_embd);
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const auto name = [i](const char* what) { return fmt::format("blk.{}.{}.weight", i, what); };
    LlamaLayer l;
    l.attn_norm = load.vector(name("attn_norm"), c.n_embd);
    l.wq = load.matrix(name("attn_q"), q_width, c.n_embd);
    l.wk = load.matrix(name("attn_k"), kv_width, c.n_embd);
    l.wv = load.matrix(name("attn_v"), kv_width, c.n_embd);
    l.wo = load.matrix(name("attn_output"), c.n_embd, q_width);
    l.ffn_norm = load.vector(name("ffn_norm"), c.n_embd);
    l.w_gate = load.matrix(name("ffn_gate"), c.n_ff, c.n_embd);
    l.w_up = load.matrix(name("ffn_up"), c.n_ff, c.n_embd);
    l.w_down = load.matrix(name("ffn_down"), c.n_embd, c.n_ff);
    l.qkv = stack_weights({&l.wq, &l.wk, &l.wv}, stack_projections);
    l.gate_up = stack_weights({&l.w_gate, &l.w_up}, stack_projections);
    w.layers.push_back(std::move(l));
  }
  w.output_norm = load.vector("output_norm.weight", c.n_embd);
  // No output.weight: the lm_head shares token_embd (tied), as llama.cpp falls back to.
  w.tied = !load.has("output.weight");
  w.output = w.tied ? w.token_embd : load.matrix("output.weight", c.n_vocab, c.n_embd);
  return w;
}

namespace {

struct Projections {
  Tensor q, k, v;  // [n, heads, head_dim]; q and k turned by RoPE
};

// When q and k come out of one product they turn as one tensor of n_head + n_head_kv heads: one
// generated kernel instead of two.
Projections project_qkv(const Tensor& h, const LlamaLayer& l, const RopeTable& rope, const LlmConfig& c) {
  const int64_t n = h.dim(0), hq = c.n_head, hk = c.n_head_kv, d = c.head_dim;
  if (l.qkv.front().rows.size() >= 2) {
    const StackedWeight& first = l.qkv.front();
    const Tensor y = linear(h, first.weight);
    const Tensor qk = rope_pairs(ops::reshape(ops::slice(y, 1, 0, (hq + hk) * d), {n, hq + hk, d}), rope);
    const Tensor v = first.rows.size() == 3 ? ops::slice(y, 1, (hq + hk) * d, (hq + 2 * hk) * d)
                                            : linear(h, l.qkv[1].weight);
    return {ops::slice(qk, 1, 0, hq), ops::slice(qk, 1, hq, hq + hk), ops::reshape(v, {n, hk, d})};
  }
  const std::vector<Tensor> p = linear_parts(h, l.qkv);
  return {rope_pairs(ops::reshape(p[0], {n, hq, d}), rope), rope_pairs(ops::reshape(p[1], {n, hk, d}), rope),
          ops::reshape(p[2], {n, hk, d})};
}

}  // namespace

Tensor llama_forward(const LlamaWeights& w, const Tensor& tokens, const Tensor& positions, const Attend& attend,
                     bool last_row_only) {
  const LlmConfig& c = w.config;
  const int64_t n = tokens.dim(0);
  const Shape norm_shape{c.n_embd};
  Tensor x = embed_rows(w.token_embd, tokens);
  const RopeTable rope = rope_table(positions, c.n_rot, c.rope_freq_base);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LlamaLayer& l = w.layers[i];
    const Tensor h = ops::rms_norm(x, norm_shape, l.attn_norm, c.norm_eps);
    const Projections p = project_qkv(h, l, rope, c);
    x = x + linear(attend(static_cast<int64_t>(i), p.q, p.k, p.v), l.wo);
    const Tensor f = ops::rms_norm(x, norm_shape, l.ffn_norm, c.norm_eps);
    const std::vector<Tensor> gate_up = linear_parts(f, l.gate_up);
    x = x + linear(ops::silu(gate_up[0]) * gate_up[1], l.w_down);
  }
  if (last_row_only) x = ops::slice(x, 0, n - 1, n);  // generation needs only the next token's logits
  return linear(ops::rms_norm(x, norm_shape, w.output_norm, c.norm_eps), w.output);
}

}  // namespace tessera::models::llm
