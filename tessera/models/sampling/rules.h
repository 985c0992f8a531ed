#pragma once
// The sampling rules, each narrowing or reshaping the candidates as llama.cpp's samplers of the same
// name do. Every rule keeps at least `min_keep` (default 1) candidates, and a parameter that disables a
// rule (k <= 0, p >= 1, p <= 0, penalty 1) leaves the list as it is.
#include <span>

#include "tessera/models/sampling/candidates.h"

namespace tessera::models::sampling {

// Tokens among `recent` (each counted once): a positive logit is divided by `penalty`, a negative one
// multiplied by it, so that a penalty > 1 always makes them less likely.
void apply_repetition_penalty(Candidates& c, std::span<const int32_t> recent, float penalty);
// The k largest logits.
void keep_top_k(Candidates& c, int k, size_t min_keep = 1);
// The smallest set of most likely tokens whose probabilities sum to at least p.
void keep_top_p(Candidates& c, float p, size_t min_keep = 1);
// Tokens at least p times as likely as the most likely one.
void keep_min_p(Candidates& c, float p, size_t min_keep = 1);
// Logits divided by t (> 0).
void apply_temperature(Candidates& c, float t);
// The largest logit (ties: the smallest id).
int32_t argmax(const Candidates& c);

}  // namespace tessera::models::sampling
