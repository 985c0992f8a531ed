#pragma once
// GPT-2 as a Tessera graph: learned position embeddings, LayerNorm with bias, one fused QKV product
// (attn_qkv: rows Q, then K, then V), GELU (tanh approximation, as llama.cpp's gpt2 graph uses) and an
// lm_head that is output.weight or, without it, the token embeddings (tied).
#include <vector>

#include "tessera/models/llm/attend.h"
#include "tessera/models/llm/gguf_weights.h"
#include "tessera/models/llm/llm_config.h"

namespace tessera::models::llm {

struct Gpt2Layer {
  Tensor attn_norm, attn_norm_bias;  // f32 [n_embd]
  QuantWeight w_qkv;                 // [3 n_embd, n_embd]
  Tensor b_qkv;                      // f32 [3 n_embd]
  QuantWeight wo;
  Tensor bo;
  Tensor ffn_norm, ffn_norm_bias;
  QuantWeight w_up, w_down;
  Tensor b_up, b_down;
};

struct Gpt2Weights {
  LlmConfig config;
  QuantWeight token_embd;     // [n_vocab, n_embd]
  QuantWeight position_embd;  // [n_ctx, n_embd]
  std::vector<Gpt2Layer> layers;
  Tensor output_norm, output_norm_bias;
  QuantWeight output;  // output.weight, or token_embd when tied
  bool tied = false;
};

Gpt2Weights load_gpt2(const io::gguf::Reader& file, const LlmConfig& config);

// Logits [n, n_vocab] of tokens at positions (integer [n], each below n_ctx).
Tensor gpt2_forward(const Gpt2Weights& w, const Tensor& tokens, const Tensor& positions,
                    const Attend& attend = causal_attend, bool last_row_only = false);

}  // namespace tessera::models::llm
