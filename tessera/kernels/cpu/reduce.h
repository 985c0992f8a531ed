#pragma once
// Reductions of contiguous float32 data viewed as [outer, mid, inner]:
//   reduce_rows    [rows, cols] -> [rows]   over the last axis
//   reduce_cols    [rows, cols] -> [cols]   over the leading axis (bias gradients of linear layers)
//   reduce_outer_inner  [outer, mid, inner] -> [mid]  (bias gradients of NCHW convolutions)
// max/min propagate NaN; mean divides the sum by the reduced count; an empty sum is 0, an empty
// max/min is -inf/+inf.
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

enum class ReduceOp { sum, mean, max, min };

void reduce_rows(ReduceOp op, int64_t rows, int64_t cols, const float* x, float* out,
                 runtime::ThreadPool* pool = nullptr);
void reduce_cols(ReduceOp op, int64_t rows, int64_t cols, const float* x, float* out,
                 runtime::ThreadPool* pool = nullptr);
void reduce_outer_inner(ReduceOp op, int64_t outer, int64_t mid, int64_t inner, const float* x, float* out,
                        runtime::ThreadPool* pool = nullptr);

}  // namespace tessera::kernels
