// The convolution tiles built on the SGEMM's 6x16 micro-kernels (AVX2 and portable: one panel layout),
// the tail applied to rows in memory, and the choice of tile for this CPU.
#include "tessera/kernels/cpu/conv_tile.h"

#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/gemm_internal.h"
#include "tessera/kernels/cpu/x86_kernels.h"

namespace tessera::kernels::conv_detail {

namespace {

using gemm_detail::kMR;
using gemm_detail::kNR;

// The micro-kernel writes all kMR rows: short tiles go through a local tile, so rows past `rows`
// (outside the output) are never touched.
template <gemm_detail::MicroKernel Kernel>
void tile_6x16(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows, bool accumulate,
               const TileTail* tail, const TileColumns* /*columns: not split_columns*/) {
  if (rows == kMR) {
    Kernel(kc, pa, pb, c, ldc, 1.0f, accumulate ? 1.0f : 0.0f);
  } else {
    alignas(64) float local[kMR * kNR];
    Kernel(kc, pa, pb, local, kNR, 1.0f, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      float* crow = c + r * ldc;
      const float* lrow = local + r * kNR;
      if (accumulate) {
        for (int64_t j = 0; j < kNR; ++j) crow[j] += lrow[j];
      } else {
        for (int64_t j = 0; j < kNR; ++j) crow[j] = lrow[j];
      }
    }
  }
  if (tail != nullptr) tail_rows(c, ldc, rows, kNR, *tail);
}

}  // namespace

void tail_rows(float* c, int64_t ldc, int64_t rows, int64_t cols, const TileTail& tail) {
  for (int64_t r = 0; r < rows; ++r) {
    float* crow = c + r * ldc;
    if (tail.bias != nullptr) {
      const float b = tail.bias[r];
      for (int64_t j = 0; j < cols; ++j) crow[j] += b;
    }
    apply_activation(tail.activation, crow, cols);
    if (tail.residual != nullptr) {
      const float* res = tail.residual + r * tail.ldr;
      for (int64_t j = 0; j < cols; ++j) crow[j] += res[j];
    }
    apply_activation(tail.post_activation, crow, cols);
  }
}

TileKernel tile_kernel_generic() {
  return {kMR, kNR, tile_6x16<gemm_detail::microkernel_generic>, "portable 6x16"};
}

#if TESSERA_X86_KERNELS
TileKernel tile_kernel_avx2() {
  return {kMR, kNR, tile_6x16<gemm_detail::microkernel_avx2>, "avx2 6x16"};
}
#else
void tile_store_fence() {}
TileKernel tile_kernel_avx2() {
  return tile_kernel_generic();
}
TileKernel tile_kernel_avx512() {
  return tile_kernel_generic();
}
#endif

TileKernel best_tile_kernel() {
  if (use_avx512()) return tile_kernel_avx512();
  if (use_avx2()) return tile_kernel_avx2();
  return tile_kernel_generic();
}

TileKernel tile_kernel_for(int64_t mr, int64_t nr) {
  if (use_avx512()) {
    const TileKernel k = tile_kernel_avx512();
    if (k.mr == mr && k.nr == nr) return k;
  }
  const TileKernel k = use_avx2() ? tile_kernel_avx2() : tile_kernel_generic();
  if (k.mr == mr && k.nr == nr) return k;
  return {};
}

}  // namespace tessera::kernels::conv_detail
