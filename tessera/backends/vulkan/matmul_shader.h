#pragma once
// Hand-written GLSL for matrix products: D[b] = A[b] @ B[b] over packed row-major operands, in 16x16
// output tiles per workgroup with 16-wide slices of A and B staged in shared memory. f32 in and out,
// or f16 storage (computed in f32) where the device has 16-bit storage. Push constants, in 32-bit
// words: M, N, K, a_batch_stride, b_batch_stride (0: one matrix for every batch), then the three
// binding shifts (A, B, D). Workgroups: x over N/16, y over M/16, z over the batch.
#include <string>

#include "tessera/core/dtype.h"

namespace tessera::backends::vulkan {

/// The tile edge (outputs per workgroup along M and N, and the K slice).
inline constexpr int kMatmulTile = 16;
/// The push-constant word where the binding shifts of a product begin.
inline constexpr int kMatmulShiftWord = 5;

/// The GLSL of the product for `dtype` (f32 or f16).
std::string matmul_glsl(DType dtype);

}  // namespace tessera::backends::vulkan
