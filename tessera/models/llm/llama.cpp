#include "tessera/models/llm/llama.h"

#include <fmt/format.h>

#include "tessera/models/llm/llm_blocks.h"
#include "tessera/ops/ops.h"

namespace tessera::models::llm {

LlamaWeights load_llama(const io::gguf::Reader& file, const LlmConfig& c) {
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
    w.layers.push_back(std::move(l));
  }
  w.output_norm = load.vector("output_norm.weight", c.n_embd);
  // No output.weight: the lm_head shares token_embd (tied), as llama.cpp falls back to.
  w.tied = !load.has("output.weight");
  w.output = w.tied ? w.token_embd : load.matrix("output.weight", c.n_vocab, c.n_embd);
  return w;
}

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
    const Tensor q = rope_pairs(ops::reshape(linear(h, l.wq), {n, c.n_head, c.head_dim}), rope);
    const Tensor k = rope_pairs(ops::reshape(linear(h, l.wk), {n, c.n_head_kv, c.head_dim}), rope);
    const Tensor v = ops::reshape(linear(h, l.wv), {n, c.n_head_kv, c.head_dim});
    x = x + linear(attend(static_cast<int64_t>(i), q, k, v), l.wo);
    const Tensor f = ops::rms_norm(x, norm_shape, l.ffn_norm, c.norm_eps);
    x = x + linear(ops::silu(linear(f, l.w_gate)) * linear(f, l.w_up), l.w_down);
  }
  if (last_row_only) x = ops::slice(x, 0, n - 1, n);  // generation needs only the next token's logits
  return linear(ops::rms_norm(x, norm_shape, w.output_norm, c.norm_eps), w.output);
}

}  // namespace tessera::models::llm
