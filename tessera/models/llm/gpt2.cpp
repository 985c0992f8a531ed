#include "tessera/models/llm/gpt2.h"

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/models/llm/llm_blocks.h"
#include "tessera/ops/ops.h"

namespace tessera::models::llm {

Gpt2Weights load_gpt2(const io::gguf::Reader& file, const LlmConfig& c) {
  const WeightLoader load(file, "gpt2");
  if (c.n_head_kv != c.n_head || c.n_head * c.head_dim != c.n_embd) {
    fail("{}: gpt2 needs head_count_kv = head_count and head_count x head size = embedding_length (got {} and {} "
         "heads of {} for a width of {})",
         file.source(), c.n_head, c.n_head_kv, c.head_dim, c.n_embd);
  }
  const int64_t d = c.n_embd;
  Gpt2Weights w;
  w.config = c;
  w.token_embd = load.matrix("token_embd.weight", c.n_vocab, d);
  w.position_embd = load.matrix("position_embd.weight", c.n_ctx, d);
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const auto name = [i](const char* what) { return fmt::format("blk.{}.{}", i, what); };
    Gpt2Layer l;
    l.attn_norm = load.vector(name("attn_norm.weight"), d);
    l.attn_norm_bias = load.vector(name("attn_norm.bias"), d);
    l.w_qkv = load.matrix(name("attn_qkv.weight"), 3 * d, d);
    l.b_qkv = load.vector(name("attn_qkv.bias"), 3 * d);
    l.wo = load.matrix(name("attn_output.weight"), d, d);
    l.bo = load.vector(name("attn_output.bias"), d);
    l.ffn_norm = load.vector(name("ffn_norm.weight"), d);
    l.ffn_norm_bias = load.vector(name("ffn_norm.bias"), d);
    l.w_up = load.matrix(name("ffn_up.weight"), c.n_ff, d);
    l.b_up = load.vector(name("ffn_up.bias"), c.n_ff);
    l.w_down = load.matrix(name("ffn_down.weight"), d, c.n_ff);
    l.b_down = load.vector(name("ffn_down.bias"), d);
    w.layers.push_back(std::move(l));
  }
  w.output_norm = load.vector("output_norm.weight", d);
  w.output_norm_bias = load.vector("output_norm.bias", d);
  w.tied = !load.has("output.weight");
  w.output = w.tied ? w.token_embd : load.matrix("output.weight", c.n_vocab, d);
  return w;
}

Tensor gpt2_forward(const Gpt2Weights& w, const Tensor& tokens, const Tensor& positions, const Attend& attend,
                    bool last_row_only) {
  const LlmConfig& c = w.config;
  const int64_t n = tokens.dim(0), d = c.n_embd;
  const Shape norm_shape{d};
  const Shape heads{n, c.n_head, c.head_dim};
  Tensor x = embed_rows(w.token_embd, tokens) + embed_rows(w.position_embd, positions);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Gpt2Layer& l = w.layers[i];
    const Tensor h = ops::layer_norm(x, norm_shape, l.attn_norm, l.attn_norm_bias, c.norm_eps);
    const std::vector<Tensor> qkv = ops::split(linear(h, l.w_qkv, l.b_qkv), {d, d, d}, 1);
    const Tensor o = attend(static_cast<int64_t>(i), ops::reshape(qkv[0], heads), ops::reshape(qkv[1], heads),
                            ops::reshape(qkv[2], heads));
    x = x + linear(o, l.wo, l.bo);
    const Tensor f = ops::layer_norm(x, norm_shape, l.ffn_norm, l.ffn_norm_bias, c.norm_eps);
    x = x + linear(ops::gelu(linear(f, l.w_up, l.b_up), true), l.w_down, l.b_down);
  }
  if (last_row_only) x = ops::slice(x, 0, n - 1, n);  // generation needs only the next token's logits
  return linear(ops::layer_norm(x, norm_shape, w.output_norm, w.output_norm_bias, c.norm_eps), w.output);
}

}  // namespace tessera::models::llm
