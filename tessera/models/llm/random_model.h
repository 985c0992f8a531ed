#pragma once
// Seeded random-weight models of any shape, written as GGUF files that Tessera and llama.cpp both load
// (`tessera init-model`): the Llama family or GPT-2, with a synthetic tokenizer (synthetic_vocab.h),
// weights in any GGML type or llama-quantize mix. Matrices draw uniformly with variance 1 / fan_in and
// norm scales sit near 1, so activations and logits stay of order one at any depth and width, and the
// same seed always gives the same bytes.
#include <cstdint>
#include <functional>
#include <string>

#include "tessera/models/llm/llm_config.h"

namespace tessera::models::llm {

struct RandomModelSpec {
  Arch arch = Arch::llama;
  int64_t dim = 256;       // embedding_length
  int64_t layers = 2;      // block_count
  int64_t heads = 8;       // attention.head_count
  int64_t kv_heads = 0;    // attention.head_count_kv (0: heads); gpt2 needs heads
  int64_t ffn = 768;       // feed_forward_length
  int64_t vocab = 1024;    // rows of token_embd; the tokenizer gets exactly this many tokens
  int64_t ctx = 2048;      // context_length
  bool tied = false;       // llama: no output.weight (the lm_head is token_embd); gpt2 is always tied
  uint64_t seed = 0;
  std::string type = "f32";  // a GGML type name for the matrices, or q4_k_m / q5_k_m
  double rope_freq_base = 10000.0;
  double norm_eps = 1e-5;
  std::string name;  // general.name (default: "random-<arch>")

  // Throws naming the first inconsistent field (dim not a multiple of heads, heads of kv_heads, ...).
  void validate() const;
};

// Writes the model to `path` atomically. `on_tensor(i, n, name)` (optional) follows progress.
void write_random_model(const RandomModelSpec& spec, const std::string& path,
                        const std::function<void(size_t, size_t, const std::string&)>& on_tensor = {});

}  // namespace tessera::models::llm
