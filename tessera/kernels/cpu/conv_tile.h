#pragma once
// The register tiles of the implicit-GEMM convolution (conv_gemm.cpp): a tile of MR output channels by
// NR output pixels, c[r, j] (+)= sum_p pa[p * S + r] * pb[p * NR + j] over one k block (S: the weight
// panel's stride, RowPanels in conv_pack.h), then on the
// last k block the convolution's tail (per-channel bias, activation, residual, activation) while the
// tile is still in registers. Internal to tessera/kernels/cpu/conv_*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/conv.h"

namespace tessera::kernels::conv_detail {

// The tail of one tile: rows are output channels, so the bias is one value per row.
struct TileTail {
  const float* bias = nullptr;  // the tile's first row's bias, or null
  Activation activation = Activation::none;
  const float* residual = nullptr;  // the tile's first element in the residual, row stride ldr
  int64_t ldr = 0;
  Activation post_activation = Activation::none;
  // Store with non-temporal stores where the kernel can (whole, aligned rows): an output much larger
  // than the caches is read back from memory anyway, and these skip reading each line before writing it.
  bool stream = false;
};

// Orders a task's non-temporal stores before whatever reads them next (another thread, after the pool's
// barrier): call at the end of a task that may have streamed.
void tile_store_fence();

// Whether the tiles apply this activation in registers (others are applied by tail_rows afterwards).
inline bool tile_activation(Activation a) {
  return a == Activation::none || a == Activation::relu || a == Activation::relu6;
}

// Where a tile's columns go when not all NR of them are at c: the lanes in `first` go to c (the columns
// of one image), those in `second` to c + second_delta (the next image's first columns); the residual
// is read the same way. Lanes in neither are computed and dropped.
struct TileColumns {
  uint32_t first = 0, second = 0;
  int64_t second_delta = 0;
};

// Computes `rows` (<= mr) rows by the NR columns of c (row stride ldc), or by `columns` when it is not
// null (kernels with split_columns only); adds c's old values when `accumulate`; applies `tail` when
// it is not null (its activations must pass tile_activation).
using TileFn = void (*)(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows,
                        bool accumulate, const TileTail* tail, const TileColumns* columns);

struct TileKernel {
  int64_t mr = 0, nr = 0;
  TileFn run = nullptr;
  const char* name = "";
  bool split_columns = false;  // takes TileColumns (else partial tiles go through a local tile)
  bool exact_rows = false;     // runs any row count in registers, reading a panel of exactly those rows
                               // (else a panel padded to mr; shorter tiles go through a local tile)
};

TileKernel tile_kernel_generic();  // 6 x 16, the SGEMM's portable micro-kernel: every CPU
TileKernel tile_kernel_avx2();     // 6 x 16, the SGEMM's AVX2 micro-kernel (the same panel layout)
TileKernel tile_kernel_avx512();   // 12 x 32, AVX-512F
// The best tile this CPU runs (use_avx512(), use_avx2()).
TileKernel best_tile_kernel();
// The tile whose shape is mr x nr if this CPU runs one, else a zero-sized kernel.
TileKernel tile_kernel_for(int64_t mr, int64_t nr);

// The scalar form of a tail on `rows` rows of `cols` columns (tiles cut at an image edge, and
// activations the tiles do not apply in registers).
void tail_rows(float* c, int64_t ldc, int64_t rows, int64_t cols, const TileTail& tail);

}  // namespace tessera::kernels::conv_detail
