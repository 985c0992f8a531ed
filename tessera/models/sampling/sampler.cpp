#include "tessera/models/sampling/sampler.h"

#include <cmath>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/models/sampling/rules.h"

namespace tessera::models::sampling {

void SamplingParams::validate() const {
  TESSERA_CHECK(std::isfinite(temperature) && temperature >= 0, "sampling: --temp {} must be >= 0", temperature);
  TESSERA_CHECK(top_k >= 0, "sampling: --top-k {} must be >= 0 (0 turns it off)", top_k);
  TESSERA_CHECK(top_p > 0 && top_p <= 1, "sampling: --top-p {} must be in (0, 1]", top_p);
  TESSERA_CHECK(min_p >= 0 && min_p <= 1, "sampling: --min-p {} must be in [0, 1]", min_p);
  TESSERA_CHECK(std::isfinite(repeat_penalty) && repeat_penalty > 0, "sampling: --repeat-penalty {} must be > 0",
                repeat_penalty);
  TESSERA_CHECK(repeat_last_n >= 0, "sampling: --repeat-last-n {} must be >= 0", repeat_last_n);
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) { params_.validate(); }

void Sampler::accept(int32_t token) {
  if (params_.repeat_last_n == 0) return;
  recent_.push_back(token);
  while (recent_.size() > static_cast<size_t>(params_.repeat_last_n)) recent_.pop_front();
}

int32_t Sampler::sample(std::span<const float> logits) {
  Candidates c = Candidates::from_logits(logits);
  const std::vector<int32_t> recent(recent_.begin(), recent_.end());
  apply_repetition_penalty(c, recent, params_.repeat_penalty);
  if (params_.temperature == 0.0f) {
    const int32_t id = argmax(c);
    c.items = {{id, 0.0f, 1.0f}};
    last_ = std::move(c);
    return id;
  }
  keep_top_k(c, params_.top_k);
  keep_top_p(c, params_.top_p);
  keep_min_p(c, params_.min_p);
  apply_temperature(c, params_.temperature);
  c.softmax();
  // Inverse CDF over the sorted candidates; the last one takes any rounding remainder.
  const double u = rng_.uniform();
  double sum = 0;
  int32_t id = c.items.back().id;
  for (const auto& x : c.items) {
    sum += x.p;
    if (u < sum) {
      id = x.id;
      break;
    }
  }
  last_ = std::move(c);
  return id;
}

}  // namespace tessera::models::sampling
