#pragma once
// A next-token sampler: the repetition penalty over the last tokens, then top-k, top-p, min-p and the
// temperature, then a draw from what is left (llama.cpp's default chain, in its order). Temperature 0
// is greedy: the argmax after the penalty. Reproducible: one seed, one sequence of tokens.
#include <cstdint>
#include <deque>
#include <span>

#include "tessera/models/sampling/candidates.h"
#include "tessera/models/sampling/rng.h"

namespace tessera::models::sampling {

// The sampler's settings, with llama.cpp's defaults.
struct SamplingParams {
  float temperature = 0.8f;  // 0: greedy
  int top_k = 40;            // <= 0: off
  float top_p = 0.95f;       // 1: off
  float min_p = 0.05f;       // 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int repeat_last_n = 64;       // how many recent tokens the penalty looks at
  uint64_t seed = 0;            // seeds the sampler's generator: same seed, logits and params, same tokens

  // Throws tessera::Error naming the option that is out of range.
  void validate() const;
};

// Picks each next token from a model's logits.
class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // Picks the next token from `logits` (one per vocabulary entry). Does not record it: call accept().
  int32_t sample(std::span<const float> logits);
  // Records a token (a prompt token or a sampled one) for the repetition penalty.
  void accept(int32_t token);
  // The candidates sample() drew from last time, with their probabilities (for tests and tools).
  const Candidates& last_candidates() const { return last_; }

 private:
  SamplingParams params_;
  Rng rng_;
  std::deque<int32_t> recent_;
  Candidates last_;
};

}  // namespace tessera::models::sampling
