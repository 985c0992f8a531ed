#pragma once
// Learning-rate schedules as functions of the step count; compose with warmup(...).
#include <functional>
#include <memory>

namespace tessera::optim {

// The learning rate for a step number (from 0); pass it to training loops, which call set_lr each step.
using Schedule = std::function<double(int64_t step)>;

Schedule constant_lr(double lr);  // `lr` at every step
// lr * gamma^(step / step_size)
Schedule step_lr(double lr, int64_t step_size, double gamma = 0.1);
// Cosine from lr down to min_lr over total_steps, then min_lr.
Schedule cosine_lr(double lr, int64_t total_steps, double min_lr = 0.0);
// Linear warm-up from 0 to the inner schedule's value over warmup_steps, then the inner schedule
// (shifted so that it starts at step 0 after the warm-up).
Schedule linear_warmup(Schedule inner, int64_t warmup_steps);

}  // namespace tessera::optim
