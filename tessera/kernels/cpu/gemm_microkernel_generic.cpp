// The portable 6x16 micro-kernel for CPUs without AVX2/FMA: plain loops the compiler vectorises for
// the baseline ISA. Same packed layout as the AVX2 kernel, so the driver is shared.
#include "tessera/kernels/cpu/gemm_internal.h"

namespace tessera::kernels::gemm_detail {

void microkernel_generic(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, float alpha, float beta) {
  float acc[kMR][kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* brow = pb + p * kNR;
    for (int64_t r = 0; r < kMR; ++r) {
      const float av = pa[p * kMR + r];
      for (int64_t j = 0; j < kNR; ++j) acc[r][j] += av * brow[j];
    }
  }
  for (int64_t r = 0; r < kMR; ++r) {
    float* crow = c + r * ldc;
    if (beta == 0.0f) {
      for (int64_t j = 0; j < kNR; ++j) crow[j] = alpha * acc[r][j];
    } else {
      for (int64_t j = 0; j < kNR; ++j) crow[j] = alpha * acc[r][j] + beta * crow[j];
    }
  }
}

}  // namespace tessera::kernels::gemm_detail
