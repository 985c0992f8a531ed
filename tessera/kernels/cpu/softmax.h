#pragma once
// Softmax family over the last axis of a contiguous float32 [rows, cols] matrix, matching the IR ops
// `softmax` / `log_softmax` (tessera/ops/nn_softmax.cpp) and their gradient formulas. Rows are
// split over the pool; each row is read from memory once per pass (max, exp-sum, normalise).
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

// y = exp(x - max) / sum(exp(x - max)) per row. y may alias x.
void softmax_forward(int64_t rows, int64_t cols, const float* x, float* y, runtime::ThreadPool* pool = nullptr);
// y = x - max - log(sum(exp(x - max))) per row. y may alias x.
void log_softmax_forward(int64_t rows, int64_t cols, const float* x, float* y, runtime::ThreadPool* pool = nullptr);
// dx = y * (dy - sum(dy * y)) per row, from the softmax output y. dx may alias dy.
void softmax_backward(int64_t rows, int64_t cols, const float* y, const float* dy, float* dx,
                      runtime::ThreadPool* pool = nullptr);
// dx = dy - exp(y) * sum(dy) per row, from the log_softmax output y. dx may alias dy.
void log_softmax_backward(int64_t rows, int64_t cols, const float* y, const float* dy, float* dx,
                          runtime::ThreadPool* pool = nullptr);

// Cross-entropy from logits with integer class targets: loss[r] = logsumexp(x[r]) - x[r, target[r]];
// rows whose target equals ignore_index get loss 0. Throws tessera::Error naming the row for a
// target outside [0, cols) (other than ignore_index).
void cross_entropy_forward(int64_t rows, int64_t cols, const float* logits, const int64_t* targets, float* loss,
                           int64_t ignore_index = -100, runtime::ThreadPool* pool = nullptr);
// dlogits[r] = dloss[r] * (softmax(x[r]) - onehot(target[r])) (0 for ignored rows); dloss may be a
// single scalar broadcast to all rows (dloss_stride = 0), e.g. 1/rows for a mean reduction.
void cross_entropy_backward(int64_t rows, int64_t cols, const float* logits, const int64_t* targets, const float* dloss,
                            int64_t dloss_stride, float* dlogits, int64_t ignore_index = -100,
                            runtime::ThreadPool* pool = nullptr);

}  // namespace tessera::kernels
