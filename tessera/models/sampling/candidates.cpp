#include "tessera/models/sampling/candidates.h"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.h"

namespace tessera::models::sampling {

Candidates Candidates::from_logits(std::span<const float> logits) {
  TESSERA_CHECK(!logits.empty(), "sampling: the logits are empty");
  Candidates c;
  c.items.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    TESSERA_CHECK(!std::isnan(logits[i]), "sampling: logit {} is NaN", i);
    c.items.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
  }
  return c;
}

void Candidates::sort() {
  if (sorted) return;
  std::sort(items.begin(), items.end(), [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  });
  sorted = true;
}

void Candidates::softmax() {
  sort();
  // Subtracting the largest logit keeps exp() in range; sums in double for large vocabularies.
  const float top = items.front().logit;
  double sum = 0;
  for (auto& c : items) {
    c.p = std::isinf(c.logit) && c.logit < 0 ? 0.0f : std::exp(c.logit - top);
    sum += c.p;
  }
  for (auto& c : items) c.p = static_cast<float>(c.p / sum);
}

}  // namespace tessera::models::sampling
