#pragma once
// Normalisation over the last axis of a contiguous float32 [rows, cols] matrix, matching
// ops::layer_norm / ops::rms_norm (tessera/ops/nn_norm.cpp): biased variance, eps inside the root.
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

// y = (x - mean) / sqrt(var + eps) * weight + bias; weight/bias may be nullptr (length cols). When
// given, mean_out/rstd_out receive the per-row mean and 1/sqrt(var + eps) for the backward pass.
void layer_norm_forward(int64_t rows, int64_t cols, const float* x, const float* weight, const float* bias, float eps,
                        float* y, float* mean_out = nullptr, float* rstd_out = nullptr,
                        runtime::ThreadPool* pool = nullptr);

// The gradients of layer_norm_forward given its saved mean/rstd: dx (overwritten), and, when not
// nullptr, dweight = sum_rows(dy * xhat) and dbias = sum_rows(dy) (overwritten, length cols).
void layer_norm_backward(int64_t rows, int64_t cols, const float* x, const float* weight, const float* mean,
                         const float* rstd, const float* dy, float* dx, float* dweight, float* dbias,
                         runtime::ThreadPool* pool = nullptr);

// y = x / sqrt(mean(x^2) + eps) * weight (weight may be nullptr).
void rms_norm_forward(int64_t rows, int64_t cols, const float* x, const float* weight, float eps, float* y,
                      runtime::ThreadPool* pool = nullptr);

}  // namespace tessera::kernels
