#pragma once
// Fused Adam / AdamW update: one pass reads p, g, m, v and writes p, m, v, matching the math of
// optim::Adam / optim::AdamW (tessera/optim/adam.cpp) step for step:
//   Adam:   g' = g + wd * p;   m = b1 m + (1-b1) g';  v = b2 v + (1-b2) g'^2
//           p  = p - m / (sqrt(v) / sqrt(bc2) + eps) * (lr / bc1)
//   AdamW:  m, v from g;      p = p * (1 - lr wd) - m / (sqrt(v) / sqrt(bc2) + eps) * (lr / bc1)
// with bc1 = 1 - b1^step, bc2 = 1 - b2^step and step counted from 1.
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

struct AdamHyper {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  bool decoupled = false;  // AdamW
  int64_t step = 1;        // the step being taken, >= 1
};

// One tensor's buffers; the outputs may alias the inputs (in-place update).
struct AdamTensor {
  int64_t n = 0;
  const float* p = nullptr;
  const float* g = nullptr;
  const float* m = nullptr;
  const float* v = nullptr;
  float* p_out = nullptr;
  float* m_out = nullptr;
  float* v_out = nullptr;
};

void adam_update(const AdamHyper& h, const AdamTensor& t, runtime::ThreadPool* pool = nullptr);
// All tensors of a model in one parallel pass (the elements are split evenly over the threads,
// across tensor boundaries), so small bias vectors cost no extra dispatch.
void adam_update_many(const AdamHyper& h, const AdamTensor* tensors, int64_t count,
                      runtime::ThreadPool* pool = nullptr);

}  // namespace tessera::kernels
