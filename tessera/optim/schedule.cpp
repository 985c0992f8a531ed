#include "tessera/optim/schedule.h"

#include <cmath>
#include <numbers>

#include "tessera/core/error.h"

namespace tessera::optim {

Schedule constant_lr(double lr) {
  return [lr](int64_t) { return lr; };
}

Schedule step_lr(double lr, int64_t step_size, double gamma) {
  TESSERA_CHECK(step_size > 0, "step_lr: step_size must be positive, got {}", step_size);
  return [=](int64_t step) { return lr * std::pow(gamma, static_cast<double>(step / step_size)); };
}

Schedule cosine_lr(double lr, int64_t total_steps, double min_lr) {
  TESSERA_CHECK(total_steps > 0, "cosine_lr: total_steps must be positive, got {}", total_steps);
  return [=](int64_t step) {
    if (step >= total_steps) return min_lr;
    const double progress = static_cast<double>(step) / static_cast<double>(total_steps);
    return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(std::numbers::pi * progress));
  };
}

Schedule linear_warmup(Schedule inner, int64_t warmup_steps) {
  TESSERA_CHECK(warmup_steps >= 0, "linear_warmup: warmup_steps must be non-negative, got {}", warmup_steps);
  return [inner = std::move(inner), warmup_steps](int64_t step) {
    if (step < warmup_steps) {
      return inner(0) * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
    }
    return inner(step - warmup_steps);
  };
}

}  // namespace tessera::optim
