#pragma once
// CUDA kernels that read GGUF-encoded weight rows where they lie (the u8 blocks of quantized_matmul
// and dequantize): a product of a few activation rows with every weight row (decode), and decoding
// rows to f32, f16 or bf16 (embeddings; the tensor-core path of long prefills). The source is NVRTC
// text with one small module per (block type, kernel, variant), compiled on first use and kept in
// the kernel cache on disk.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "tessera/backends/cuda/context.h"
#include "tessera/core/dtype.h"
#include "tessera/kernels/activation.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::backends::cuda {

// Most activation rows one matvec launch takes (more go through dequantize + cuBLASLt).
inline constexpr int kMaxMatvecRows = 8;

// Whether the kernels decode rows of `k` values of `type`: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
// Q6_K, and f32/f16/bf16 rows whose length suits 16-byte loads.
bool gpu_decodes(quant::GgmlType type, int64_t k);

struct QuantKernel {
  std::shared_ptr<KernelModule> module;
  cudaKernel_t kernel = nullptr;
  int rows = 0;           // activation rows of a matvec kernel
  int rows_per_warp = 1;  // weight rows each warp group of a matvec kernel takes
};

// y[r, j] = act(sum_c x[r, c] * w[j, c] (+ bias[j])) (+ residual[r, j]) for r < rows (1..kMaxMatvecRows):
// x f32 [rows, k] and w 16-byte aligned, y and the residual f32 [rows, n]. Blocks of kMatvecWarps warps;
// `warps_per_row` (1, 2, 4 or 8) of them share a weight row (matvec_warps_per_row: short products split
// rows so that every multiprocessor has work) and take `rows_per_warp` consecutive rows
// (matvec_rows_per_warp: each x group is then read once for that many rows).
inline constexpr int kMatvecWarps = 8;
struct MatvecTail {
  const float* bias = nullptr;      // [n], or none
  const float* residual = nullptr;  // laid out as y (not y itself), or none
};
QuantKernel quant_matvec_kernel(Context& ctx, quant::GgmlType type, int rows,
                                kernels::Activation activation = kernels::Activation::none);
/// Warps that share each weight row group of a matvec over `n` rows of `k` values.
int matvec_warps_per_row(quant::GgmlType type, int64_t n, int64_t k, int rows_per_warp, int multiprocessors);
/// Consecutive weight rows one warp group takes in a matvec of `rows` activation rows.
int matvec_rows_per_warp(quant::GgmlType type, int rows);
void launch_quant_matvec(const QuantKernel& k, const void* w, const float* x, float* y, int64_t n, int64_t values,
                         int64_t row_bytes, int warps_per_row, cudaStream_t stream, const MatvecTail& tail = {});

// y[r, :] = row r of w decoded (f32, f16 or bf16), bit for bit the reference's values before the final
// rounding to a 16-bit type.
QuantKernel dequantize_kernel(Context& ctx, quant::GgmlType type, DType out);
void launch_dequantize(const QuantKernel& k, const void* w, void* y, int64_t rows, int64_t values, int64_t row_bytes,
                       int multiprocessors, cudaStream_t stream);

// y = x rounded to f16 or bf16 (the activations of a tensor-core product).
QuantKernel narrow_kernel(Context& ctx, DType out);
void launch_narrow(const QuantKernel& k, const float* x, void* y, int64_t n, int multiprocessors, cudaStream_t stream);

}  // namespace tessera::backends::cuda
