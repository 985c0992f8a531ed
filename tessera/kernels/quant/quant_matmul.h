#pragma once
// CPU matrix products on GGML-quantized weights, computed on the blocks directly:
//   y[m, n] = sum_k x[m, k] * W[n, k]     (W stored as n rows of row_bytes(type, k) bytes)
// The activations x are first quantized to the 8-bit block type that pairs with the weight type (as
// ggml does: Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the K-quants), then each block pair
// is an integer dot product scaled in float. AVX2 kernels (chosen at run time, see
// tessera/kernels/cpu/cpu_features.h) cover Q4_0, Q8_0, Q4_K and Q6_K; every other type, and CPUs
// without AVX2, use portable integer code. F32/F16/BF16 weights take a float dot product (AVX-512 or
// AVX2), except F16 weights with five or more activation rows, which run as a packed SGEMM on widened
// weight panels (f16_gemm.h). Work is split
// over weight rows on the thread pool; activation rows are processed four at a time so that each
// decoded weight block is reused.
#include <cstdint>

#include "tessera/quant/ggml_type.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels::quant {

using tessera::quant::GgmlType;

void quantized_matmul(GgmlType type, const void* w, int64_t n, int64_t k, const float* x, int64_t m, float* y,
                      runtime::ThreadPool* pool = nullptr /* default_pool() */);

// The same product on weights in the x8 layout (interleave_x8.h: Q4_0, Q8_0 or Q4_K, n a multiple of 8),
// which the AVX2 kernels compute with about half the instructions per weight byte. Results agree with
// quantized_matmul's up to float rounding.
void quantized_matmul_x8(GgmlType type, const void* w_x8, int64_t n, int64_t k, const float* x, int64_t m, float* y,
                         runtime::ThreadPool* pool = nullptr /* default_pool() */);

// The block type the activations are quantized to for weights of `type` (f32 for float weights).
GgmlType activation_type(GgmlType type);
// Quantizes one activation row of k values into `act_type` blocks the way quantized_matmul does (Q8_0
// and Q8_1 as llama.cpp's CPU backend: d = amax/127 in f16, codes rounded half to even; Q8_K with
// ggml's reference encoder; f32 copied).
void quantize_activation_row(GgmlType act_type, const float* x, void* y, int64_t k);
// Whether quantized_matmul takes weights of `type` (else it throws naming the type).
bool has_kernel(GgmlType type);
// Whether `type` has an AVX2 kernel (used when use_avx2() is also true).
bool has_avx2_kernel(GgmlType type);

}  // namespace tessera::kernels::quant
