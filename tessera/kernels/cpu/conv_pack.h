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
// Columns [j0, j0 + cols) in ceil(cols / 32) consecutive panels of 32 (panel i at dst + i * 32 * kc),
// with AVX-512 masked loads (stride 1 or 2, no dilation, kernels up to 8 wide: can_pack_columns_avx512).
void pack_columns_avx512(const ColumnSource& src, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst);
bool can_pack_columns_avx512(const Conv2dGeometry& g);

// How a group's output channels are cut into row panels, one tile each. Tiles of `mr` rows, except:
// with `exact` (tiles that run any row count in registers, each panel holding exactly its rows), a
// short last panel shares its rows with the one before (64 = 4 x 12 + 8 + 8, not 5 x 12 + 4: a
// 4-row tile runs a third as fast); without, the last panel is padded with zero rows to mr.
struct RowPanels {
  int64_t m = 0, mr = 1;
  bool exact = false;

  int64_t count() const { return (m + mr - 1) / mr; }
  // The rows of the balanced pair at the end (0 when there is none).
  int64_t pair() const {
    const int64_t c = count(), last = m - (c - 1) * mr;
    return exact && c >= 2 && 3 * last < 2 * mr ? mr + last : 0;
  }
  int64_t start(int64_t k) const {
    const int64_t c = count();
    if (k >= c) return m;
    if (pair() != 0 && k == c - 1) return (c - 2) * mr + (pair() + 1) / 2;
    return k * mr;
  }
  int64_t rows(int64_t k) const { return start(k + 1) - start(k); }
  // Floats per k step of panel k: its rows, or mr when padded.
  int64_t stride(int64_t k) const { return exact ? rows(k) : mr; }
  // Rows of a k block of packed weights: m, or m rounded up to whole panels when padded.
  int64_t padded() const { return exact ? m : count() * mr; }
};

// The weight layout: per group, per k block (of k_block_size), the row panels one after another, each
// kc x stride. Floats per group:
inline int64_t packed_weight_floats_per_group(const Conv2dGeometry& g, const RowPanels& panels) {
  return panels.padded() * col_rows(g);
}
// Where panel k of the k block [p0, p0 + kc) starts in one group's packed weights (the panels before
// it in the block hold exactly start(k) rows, or start(k) padded rows).
inline int64_t weight_panel_offset(const RowPanels& panels, int64_t p0, int64_t kc, int64_t k) {
  return p0 * panels.padded() + panels.start(k) * kc;
}
// Packs all groups of w [Cout, Cin/groups, KH, KW] (threads over the panels).
void pack_weights(const Conv2dGeometry& g, const float* w, const RowPanels& panels, int64_t k_block, float* dst,
                  runtime::ThreadPool& pool);

}  // namespace tessera::kernels::conv_detail
