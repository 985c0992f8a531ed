#pragma once
// Packing for the implicit-GEMM convolution (conv_gemm.cpp). Per group, the product is
//   Y[co, j] = sum_k W[co, k] * X[k, j],  k = (ci, kh, kw),  j = (image, oh, ow) over the whole batch,
// where X is the im2col matrix, never stored whole: each NR-column panel of a k block is gathered
// straight from the images into the tile's layout (row p of a panel at p * NR). The weights are
// packed in MR-row panels per k block, once per call or, for constant weights, once per executable.
// Internal to tessera/kernels/cpu/conv_*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/conv_internal.h"

namespace tessera::kernels::conv_detail {

// The k block size for a product of depth k: equal blocks of at most `max_block`.
inline int64_t k_block_size(int64_t k, int64_t max_block) {
  const int64_t blocks = (k + max_block - 1) / max_block;
  return (k + blocks - 1) / blocks;
}

// One group's im2col columns: x points at the group's first input channel of image 0.
struct ColumnSource {
  const Conv2dGeometry* g;
  const float* x;
  int64_t image_stride;  // floats from one image to the next (in_channels * in_h * in_w)
};

// Packs rows [p0, p0 + kc) x columns [j0, j0 + cols) of the im2col matrix into a kc x nr panel
// (cols <= nr; columns past cols are zero).
void pack_columns(const ColumnSource& src, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst);
// The same for nr == 32 with AVX-512 masked loads (stride 1 or 2, no dilation: can_pack_columns_avx512).
void pack_columns_avx512(const ColumnSource& src, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst);
bool can_pack_columns_avx512(const Conv2dGeometry& g);

// The weight layout: per group, per k block (of k_block_size), per MR-row panel, kc x mr with rows
// past the group's output channels zero. Floats per group:
inline int64_t packed_weight_floats_per_group(const Conv2dGeometry& g, int64_t mr) {
  return (out_per_group(g) + mr - 1) / mr * mr * col_rows(g);
}
// Where the panel of rows [i, i + mr) of the k block [p0, p0 + kc) starts in one group's packed weights.
inline int64_t weight_panel_offset(const Conv2dGeometry& g, int64_t mr, int64_t p0, int64_t kc, int64_t i) {
  const int64_t m_padded = (out_per_group(g) + mr - 1) / mr * mr;
  return p0 * m_padded + i * kc;
}
// Packs all groups of w [Cout, Cin/groups, KH, KW] (threads over the panels).
void pack_weights(const Conv2dGeometry& g, const float* w, int64_t mr, int64_t k_block, float* dst,
                  runtime::ThreadPool& pool);

}  // namespace tessera::kernels::conv_detail
