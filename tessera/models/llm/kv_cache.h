#pragma once
// Decoding with a KV cache. The cache of each layer is a pair of f32 arrays [n_ctx, n_head_kv, head_dim]
// that the decode graph takes as inputs and returns, updated, as outputs aliased to them
// (CompileSpec::aliases), so it is written in place and nothing is reallocated per token. Token
// positions are inputs too: one executable per chunk length serves every position.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/models/llm/llm_model.h"

namespace tessera::models::llm {

// The decode graph for chunks of m tokens: inputs tokens and positions (i64 [m]), then each layer's
// keys and values cache (k0, v0, k1, v1, ...); outputs the logits [m, n_vocab] then the updated caches.
// Each token attends to the cache rows at positions up to its own, its own chunk included.
struct DecodeGraph {
  ir::Graph graph;
  std::vector<backends::Alias> aliases;  // output 1 + j is written into input 2 + j
};
// `n_ctx` rows of cache per layer (0: the model's whole context), of `cache` dtype (f32, or f16 as
// llama.cpp's default: half the bytes, new rows rounded once as they are written); with last_row_only
// the logits are the last token's only, [1, n_vocab] (the lm_head then runs on one row instead of m).
DecodeGraph decode_graph(const LlmModel& model, int64_t m, int64_t n_ctx = 0, bool last_row_only = false,
                         DType cache = DType::f32);

class Decoder {
 public:
  // `model` must outlive this object; the cache (zeroed) holds `n_ctx` positions (0: the model's whole
  // context; more than that is an error naming both).
  Decoder(const LlmModel& model, backends::Backend& backend, int64_t n_ctx = 0, DType cache = DType::f32);

  // Feeds `tokens` at positions position() .. position() + size - 1 and returns their logits
  // [size, n_vocab], or with last_row_only only the last one's [1, n_vocab]; the cache keeps them.
  Array step(const std::vector<int64_t>& tokens, bool last_row_only = false);
  int64_t position() const { return position_; }
  int64_t context() const { return n_ctx_; }
  void reset() { position_ = 0; }  // earlier rows are overwritten as new tokens arrive

 private:
  const LlmModel& model_;
  backends::Backend& backend_;
  std::vector<Array> cache_;  // k0, v0, k1, v1, ...
  std::map<std::pair<int64_t, bool>, std::unique_ptr<backends::Executable>> by_length_;  // (m, last row only)
  int64_t n_ctx_ = 0;
  DType cache_dtype_ = DType::f32;
  int64_t position_ = 0;
};

}  // namespace tessera::models::llm
