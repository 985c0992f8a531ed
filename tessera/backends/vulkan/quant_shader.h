#pragma once
// GLSL that reads GGUF weight rows where they lie (the u8 blocks of quantized_matmul and dequantize),
// bound as 32-bit words so that no 8-bit storage is needed: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
// Q6_K, and f32/f16/bf16 rows. Two shaders per type: a matvec of a few activation rows against every
// weight row (decode), and decoding rows to f32 (embedding lookups; the weight of a longer product,
// written transposed for the tiled matmul shader).
#include <cstdint>
#include <string>

#include "tessera/kernels/activation.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::backends::vulkan {

/// Most activation rows one matvec dispatch takes; longer products decode the weight and go through
/// the tiled matmul shader.
inline constexpr int kMaxMatvecRows = 8;
/// Invocations that share one weight row of a matvec, and weight rows per workgroup.
inline constexpr int kMatvecLanes = 32;
inline constexpr int kMatvecRowsPerGroup = 4;

/// Whether the shaders decode rows of `k` values of `type` (block types: any whole number of blocks;
/// f16/bf16 rows: an even k; f32: any k).
bool vulkan_decodes(quant::GgmlType type, int64_t k);
/// Values each shader invocation decodes at once (a block's 32, or a run of a float row).
int decode_group(quant::GgmlType type, int64_t k);

/// What a matvec fuses as it stores (common/epilogues: + bias [n], an activation of the biased
/// product (ReLU or tanh-GELU), then + a residual laid out as y).
struct MatvecTail {
  bool bias = false, residual = false;
  kernels::Activation activation = kernels::Activation::none;
  int bindings() const { return (bias ? 1 : 0) + (residual ? 1 : 0); }
  bool empty() const { return bindings() == 0 && activation == kernels::Activation::none; }
  std::string suffix() const;       // for pipeline names: "_bias_gelu_tanh_residual"
  std::string description() const;  // for step names: " +bias tanh-gelu +residual"
};
/// `float activate(float v)`: the tail's activation as GLSL (the identity for none).
std::string tail_activation_glsl(kernels::Activation a);

/// A tail as GLSL: `activate()` and the bias and residual bindings (numbered from `first_binding`, their
/// shifts in shift[binding]), and the statements that apply the tail to `float v`, the bias read at
/// `bias_index` and the residual at `residual_index` (GLSL expressions), each line led by `indent`.
struct TailGlsl {
  std::string declarations, statements;
};
TailGlsl tail_glsl(const MatvecTail& tail, int first_binding, const std::string& bias_index,
                   const std::string& residual_index, const std::string& indent);

/// `float finish(float v, uint r, uint j)`: the tail a matvec applies as it stores, + bias[j], the
/// activation, then + residual[r * n + j] (the graph's order), with the bindings from 3 on that it
/// reads (their shifts in shift[3..]).
std::string matvec_tail_glsl(const MatvecTail& tail);

/// y[r, j] = sum_c x[r, c] * w[j, c] (+ bias[j]) (+ residual[r, j]) for r < rows (1..kMaxMatvecRows):
/// bindings w (words), x, y (f32), then the bias and the residual where `tail` has them; push words
/// n, k, row_bytes, then the binding shifts. kMatvecRowsPerGroup weight rows per workgroup of
/// kMatvecLanes each, reduced with subgroupAdd where `subgroups` (the device has subgroup arithmetic in
/// compute shaders and subgroups no wider than a row's lanes), else in shared memory.
std::string quant_matvec_glsl(quant::GgmlType type, int64_t k, int rows, bool subgroups, const MatvecTail& tail = {});
/// The push word where the matvec's binding shifts begin.
inline constexpr int kMatvecShiftWord = 3;

/// y = the rows of w decoded to f32, bit for bit the reference's values: bindings w (words), y; push
/// words rows, k, row_bytes, then the two binding shifts. `transposed` writes value c of row r at
/// y[c * rows + r] (the [k, n] operand of the matmul shader) instead of y[r * k + c].
std::string quant_dequantize_glsl(quant::GgmlType type, int64_t k, bool transposed);
inline constexpr int kDequantizeShiftWord = 3;

}  // namespace tessera::backends::vulkan
