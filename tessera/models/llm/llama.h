#pragma once
// The Llama family as a Tessera graph: RMSNorm, RoPE (llama.cpp's mode 0: consecutive pairs),
// grouped-query attention, a SwiGLU feed-forward block and an lm_head that is output.weight or, when
// the file has none, the token embeddings (tied). Tensor names and shapes follow llama.cpp's GGUF
// layout (token_embd, blk.N.attn_q, ..., output_norm, output).
#include <vector>

#include "tessera/models/llm/attend.h"
#include "tessera/models/llm/gguf_weights.h"
#include "tessera/models/llm/llm_config.h"
#include "tessera/models/llm/stacked_weight.h"

namespace tessera::models::llm {

struct LlamaLayer {
  Tensor attn_norm;  // f32 [n_embd]
  QuantWeight wq, wk, wv, wo;
  Tensor ffn_norm;  // f32 [n_embd]
  QuantWeight w_gate, w_up, w_down;
  // What the forward multiplies by: {wq, wk, wv} and {w_gate, w_up}, stacked where the load asked for it.
  std::vector<StackedWeight> qkv, gate_up;
};

struct LlamaWeights {
  LlmConfig config;
  QuantWeight token_embd;  // [n_vocab, n_embd]
  std::vector<LlamaLayer> layers;
  Tensor output_norm;  // f32 [n_embd]
  QuantWeight output;  // [n_vocab, n_embd]: output.weight, or token_embd when tied
  bool tied = false;
};

// With `stack_projections`, q/k/v and gate/up of a layer become one product each where their types
// agree (stacked_weight.h): fewer, larger launches on a GPU, at the cost of a copy of those weights in
// memory beside the file's mapping.
LlamaWeights load_llama(const io::gguf::Reader& file, const LlmConfig& config, bool stack_projections = false);

// Logits [n, n_vocab] of tokens (integer [n]) at positions (integer [n]); `attend` combines each
// layer's RoPE'd queries with its keys and values (causal_attend for a whole sequence).
Tensor llama_forward(const LlamaWeights& w, const Tensor& tokens, const Tensor& positions,
                     const Attend& attend = causal_attend, bool last_row_only = false);

}  // namespace tessera::models::llm
