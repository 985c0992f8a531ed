// The f16 GEMM's AVX2 register tile is Tessera's 6x16 SGEMM micro-kernel on the widened panels; edge
// tiles (the last activation or weight rows) run it into a scratch tile and copy the valid part.
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS  // x86 only: without it, use_avx2() is false and nothing calls these
#include <immintrin.h>

#include <algorithm>

#include "tessera/kernels/cpu/gemm_internal.h"
#include "tessera/kernels/quant/f16_gemm.h"

namespace tessera::kernels::quant {

namespace {

using kernels::gemm_detail::kMR;
using kernels::gemm_detail::kNR;

void run(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows, int64_t cols,
         bool accumulate) {
  const float beta = accumulate ? 1.0f : 0.0f;
  if (rows == kMR && cols == kNR) {
    gemm_detail::microkernel_avx2(kc, pa, pb, c, ldc, 1.0f, beta);
    return;
  }
  alignas(64) float part[kMR * kNR];
  gemm_detail::microkernel_avx2(kc, pa, pb, part, kNR, 1.0f, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    for (int64_t j = 0; j < cols; ++j) row[j] = accumulate ? row[j] + part[r * kNR + j] : part[r * kNR + j];
  }
}

}  // namespace

F16Tile avx2_f16_tile() {
  return {kMR, kNR, run};
}

}  // namespace tessera::kernels::quant

#endif  // TESSERA_X86_KERNELS
