#include "tessera/models/sampling/rules.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "tessera/core/error.h"

namespace tessera::models::sampling {

void apply_repetition_penalty(Candidates& c, std::span<const int32_t> recent, float penalty) {
  TESSERA_CHECK(penalty > 0, "sampling: repetition penalty {} must be positive", penalty);
  if (penalty == 1.0f || recent.empty()) return;
  const std::unordered_set<int32_t> seen(recent.begin(), recent.end());
  for (auto& x : c.items) {
    if (!seen.contains(x.id)) continue;
    x.logit = x.logit > 0 ? x.logit / penalty : x.logit * penalty;
  }
  c.sorted = false;
}

void keep_top_k(Candidates& c, int k, size_t min_keep) {
  if (k <= 0) return;
  const size_t keep = std::max(static_cast<size_t>(k), min_keep);
  if (keep >= c.items.size()) return;
  c.sort();
  c.items.resize(keep);
}

void keep_top_p(Candidates& c, float p, size_t min_keep) {
  if (p >= 1.0f) return;
  c.softmax();
  double sum = 0;
  size_t keep = c.items.size();
  for (size_t i = 0; i < c.items.size(); ++i) {
    sum += c.items[i].p;
    // The token that reaches p is kept: the set is the smallest whose mass is >= p.
    if (sum >= p && i + 1 >= min_keep) {
      keep = i + 1;
      break;
    }
  }
  c.items.resize(keep);
}

void keep_min_p(Candidates& c, float p, size_t min_keep) {
  if (p <= 0.0f) return;
  c.sort();
  // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p): no softmax needed.
  const float threshold = c.items.front().logit + std::log(p);
  size_t keep = 0;
  while (keep < c.items.size() && (c.items[keep].logit >= threshold || keep < min_keep)) ++keep;
  c.items.resize(keep);
}

void apply_temperature(Candidates& c, float t) {
  TESSERA_CHECK(t > 0, "sampling: temperature {} must be positive here (0 means greedy)", t);
  for (auto& x : c.items) x.logit /= t;
}

int32_t argmax(const Candidates& c) {
  TESSERA_CHECK(!c.items.empty(), "sampling: no candidates left");
  const auto it = std::min_element(c.items.begin(), c.items.end(), [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  });
  return it->id;
}

}  // namespace tessera::models::sampling
