#pragma once
// Hand-written GLSL for matrix products: D[b] = A[b] @ B[b] over row-major operands, either of which
// may be stored transposed (a packed [K, M] A or [N, K] B, read where it lies instead of copied). A workgroup
// of 256 invocations computes a (16 R) x (16 R) tile of D, each invocation an R x R block of it held in
// registers, from K slices of A and B staged in shared memory (R = 4 for small products, 8 for large
// ones: more work per staged value, fewer workgroups). f32 in and out, or f16 storage (computed in f32)
// where the device has 16-bit storage. Push constants, in 32-bit words: M, N, K, a_batch_stride,
// b_batch_stride (0: one matrix for every batch), then the three binding shifts (A, B, D). Workgroups:
// x over N / tile, y over M / tile, z over the batch.
#include <cstdint>
#include <string>

#include "tessera/backends/vulkan/quant_shader.h"
#include "tessera/core/dtype.h"

namespace tessera::backends::vulkan {

/// The K slice staged per step.
inline constexpr int kMatmulSlice = 16;
/// The push-constant word where the binding shifts of a product begin.
inline constexpr int kMatmulShiftWord = 5;

/// Outputs per invocation along each axis (R) for an m x n product: 8 once both sides fill many
/// 128-wide tiles, else 4.
int matmul_block(int64_t m, int64_t n);
/// The tile edge of a workgroup for block R.
inline constexpr int matmul_tile(int block) { return 16 * block; }

/// How a tiled product reads A and B and where it stores D, as GLSL: `a` is A(r, k) and `b` B(k, c)
/// (expressions over r, c, k, M, N, K and a0 / b0, the operands' first elements, reading a[] and b[]),
/// `d` the element of D for (r, c) before the batch's offset, `bias_index` the tail's bias element.
/// `definitions` (constants, helper functions) come after the bindings. `a_along_k` / `b_along_k`: the
/// operand is contiguous along k, so consecutive invocations stage consecutive k (else consecutive
/// rows / columns). `k_split` > 0: workgroup z sums K range [z k_split, (z + 1) k_split) (whole
/// slices) into the z-th M x N partial of D (no batch then, and no tail).
struct TiledOperands {
  std::string definitions;
  std::string a = "a[a0 + r * K + k]", b = "b[b0 + k * N + c]", d = "r * N + c", bias_index = "c";
  bool a_along_k = true, b_along_k = false;
  int k_split = 0;
};
/// The tiled product's GLSL for those operands (matmul_glsl is its row-major / transposed form;
/// the convolutions of library_ops_conv.cpp read their operands through tap functions).
std::string tiled_product_glsl(DType dtype, int block, const TiledOperands& ops, const MatvecTail& tail = {});

/// The GLSL of the product for `dtype` (f32 or f16) with R = `block` (4 or 8); `a_transposed`: A is
/// stored [K, M] (its batch stride still in the push constants), `b_transposed`: B is stored [N, K];
/// `tail` (f32 only): + bias[col] (binding 3), the activation, + a residual laid out as D (the next
/// binding), applied as each result is stored.
std::string matmul_glsl(DType dtype, int block, bool a_transposed = false, bool b_transposed = false,
                        const MatvecTail& tail = {});
/// Its pipeline name.
std::string matmul_pipeline_name(DType dtype, int block, bool a_transposed = false, bool b_transposed = false,
                                 const MatvecTail& tail = {});

/// The tile edge of the cooperative-matrix product.
inline constexpr int kCoopmatTile = 128;
/// The f16 product on cooperative matrices (VK_NV_cooperative_matrix, Features::coopmat_f16): a
/// workgroup of 8 subgroups computes a 128 x 128 tile, each subgroup 64 x 32 of it as 4 x 2 16x16 f32
/// accumulators, from K slices of 32 staged in shared memory as f16 (16-byte loads where rows are
/// aligned, the next slice's in flight while one is multiplied); results leave through a per-subgroup
/// 16x16 staging block so ragged edges are stored element by element. Same bindings and push
/// constants as matmul_glsl.
std::string matmul_coopmat_glsl();

}  // namespace tessera::backends::vulkan
