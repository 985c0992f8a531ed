#pragma once
// The decode-time quantized matvec with wide loads (Q4_0, Q4_1, Q8_0, Q4_K, Q5_K rows of a multiple of
// 256 values). quant_matvec_glsl's invocations read 16-bit fields one word load at a time, a block per
// step; here an invocation takes a "superblock" of 256 consecutive values of a row (8 blocks of 32,
// or one K-quant block), whose bytes are 16-byte aligned for every one of these formats, with 16-byte
// loads (uvec4), for one to four weight rows at once so that each activation value loaded (vec4)
// serves several rows. A row's superblocks are spread over `lanes` invocations whose partial sums meet
// in a butterfly of subgroupShuffleXor (or the same tree in shared memory), so the sums do not depend
// on the device's subgroup width. Same bindings and push constants as quant_matvec_glsl.
#include <cstdint>
#include <string>

#include "tessera/backends/vulkan/quant_shader.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::backends::vulkan {

/// Invocations per workgroup of the wide matvec.
inline constexpr int kWideMatvecSize = 256;
/// Values per superblock (what one invocation reads per step).
inline constexpr int64_t kWideMatvecValues = 256;

/// Whether the wide matvec takes rows of `k` values of `type`.
bool wide_matvec_takes(quant::GgmlType type, int64_t k);

/// How the wide matvec spreads a product over invocations.
struct WideMatvecShape {
  int lanes = 32;     // invocations per group of weight rows (a power of two, at most 32)
  int row_block = 1;  // weight rows each invocation takes (1, 2 or 4)
  // Loops over a superblock's groups and words unrolled (so that its words stay in registers); off
  // for CPU drivers, which spend seconds compiling the unrolled code (lavapipe: 4-5 s a shader).
  bool unroll = true;
  /// Weight rows per workgroup.
  int rows_per_workgroup() const { return kWideMatvecSize / lanes * row_block; }
};

/// The shape for n weight rows of k values and `rows` activation rows: lanes enough for the row's
/// superblocks (up to 32), and 2 weight rows per invocation for single-row products of formats of
/// under 6 bits (the accumulators and superblock words multiply with both).
/// TESSERA_VULKAN_MATVEC_ROWS=1|2|4 forces the weight rows per invocation (for measuring them).
WideMatvecShape wide_matvec_shape(quant::GgmlType type, int64_t k, int rows);

/// The wide matvec's GLSL: y[r, j] = sum_c x[r, c] * w[j, c] (+ the tail) for r < rows (1..8), as
/// quant_matvec_glsl. `shuffle`: the device has subgroupShuffleXor in compute shaders (else the
/// lanes meet in shared memory only). Workgroups: (n + rows_per_workgroup - 1) / rows_per_workgroup,
/// or fewer (they loop).
std::string quant_matvec_wide_glsl(quant::GgmlType type, int64_t k, int rows, const WideMatvecShape& shape,
                                   bool shuffle, const MatvecTail& tail = {});

}  // namespace tessera::backends::vulkan
