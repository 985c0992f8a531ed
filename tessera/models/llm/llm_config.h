#pragma once
// The hyperparameters of a decoder-only language model, read from a GGUF file's metadata
// (`general.architecture`, then `<arch>.embedding_length`, `<arch>.block_count`, ...). The vocabulary
// size comes from token_embd's shape, which every file has; a `<arch>.vocab_size` key must agree.
// Keys llama.cpp treats as optional keep its defaults (head_count_kv = head_count, rope base 10000, all
// of a head rotated); every other missing, mistyped or inconsistent key is an error naming it.
#include <cstdint>
#include <string>

#include "tessera/io/gguf/gguf_reader.h"

namespace tessera::models::llm {

enum class Arch { llama, gpt2 };

const char* arch_name(Arch arch);

struct LlmConfig {
  Arch arch = Arch::llama;
  int64_t n_embd = 0;     // width of the residual stream
  int64_t n_layer = 0;    // transformer blocks
  int64_t n_head = 0;     // query heads
  int64_t n_head_kv = 0;  // key/value heads (grouped-query attention when fewer than n_head)
  int64_t head_dim = 0;   // values per head (attention.key_length, else n_embd / n_head)
  int64_t n_ff = 0;       // hidden width of the feed-forward block
  int64_t n_ctx = 0;      // context length the model was trained for
  int64_t n_vocab = 0;    // rows of token_embd
  int64_t n_rot = 0;      // leading values of each head that RoPE rotates (llama only; 0 for gpt2)
  double rope_freq_base = 10000.0;
  double norm_eps = 1e-5;  // RMSNorm's (llama) or LayerNorm's (gpt2) epsilon

  // The metadata key `<arch>.<suffix>`, for messages.
  std::string key(const std::string& suffix) const;
};

// Reads and checks the hyperparameters; throws tessera::Error naming the file and the key.
LlmConfig read_llm_config(const io::gguf::Reader& file);

}  // namespace tessera::models::llm
