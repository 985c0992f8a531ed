// The f16 GEMM's AVX-512 register tile: 12 activation rows by 32 weight rows in 24 zmm accumulators.
// Per k step two panel loads and twelve broadcasts (folded into the FMAs) feed 24 FMAs, enough
// independent chains to cover the FMA latency on two 512-bit ports. Short tiles (the last activation
// rows) run the same loop with fewer rows; short column counts store through a mask.
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS  // x86 only: without it, use_avx2() is false and nothing calls these
#include <immintrin.h>

#include <utility>

#include "tessera/kernels/quant/f16_gemm.h"

namespace tessera::kernels::quant {

namespace {

constexpr int64_t kMR = 12, kNR = 32;

template <int R>
__attribute__((target("avx512f"))) void tile(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc,
                                             int64_t cols, bool accumulate) {
  __m512 lo[R], hi[R];
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(pb + p * kNR), b1 = _mm512_load_ps(pb + p * kNR + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(pa[p * kMR + r]);
      lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
    }
  }
  const __mmask16 m0 = static_cast<__mmask16>(cols >= 16 ? 0xFFFF : (1u << cols) - 1);
  const __mmask16 m1 = static_cast<__mmask16>(cols >= 32 ? 0xFFFF : cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      lo[r] = _mm512_add_ps(lo[r], _mm512_maskz_loadu_ps(m0, row));
      hi[r] = _mm512_add_ps(hi[r], _mm512_maskz_loadu_ps(m1, row + 16));
    }
    _mm512_mask_storeu_ps(row, m0, lo[r]);
    _mm512_mask_storeu_ps(row + 16, m1, hi[r]);
  }
}

template <int... R>
void run_rows(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows, int64_t cols,
              bool accumulate, std::integer_sequence<int, R...>) {
  using Fn = void (*)(int64_t, const float*, const float*, float*, int64_t, int64_t, bool);
  static constexpr Fn kByRows[] = {tile<R + 1>...};
  kByRows[rows - 1](kc, pa, pb, c, ldc, cols, accumulate);
}

void run(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows, int64_t cols,
         bool accumulate) {
  run_rows(kc, pa, pb, c, ldc, rows, cols, accumulate, std::make_integer_sequence<int, kMR>{});
}

}  // namespace

F16Tile avx512_f16_tile() {
  return {kMR, kNR, run};
}

}  // namespace tessera::kernels::quant

#endif  // TESSERA_X86_KERNELS
