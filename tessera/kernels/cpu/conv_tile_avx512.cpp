// The convolution's AVX-512 register tile: 12 output channels by 32 output pixels in 24 zmm
// accumulators. Per k step two panel loads and twelve broadcasts feed 24 FMAs, enough independent
// chains to cover the FMA latency on two 512-bit ports; the tail (bias, ReLU / ReLU6, residual) is
// applied before the one store, so a fused convolution writes its output once. A tile cut by the
// last column or by the edge between two images stores through masks, in one or two places.
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS  // x86 only: without it, use_avx512() is false and nothing calls these
#include <immintrin.h>

#include "tessera/kernels/cpu/activation_avx512.h"

#include <cstdint>
#include <utility>

#include "tessera/kernels/cpu/conv_tile.h"

namespace tessera::kernels::conv_detail {

namespace {

constexpr int64_t kMR = 12, kNR = 32;

// Loads (stores) 32 columns of a row: whole vectors, or through the two segments' masks.
struct Row {
  const TileColumns* columns;
  __attribute__((target("avx512f"), always_inline)) inline void load(const float* p, __m512& lo, __m512& hi) const {
    if (columns == nullptr) {
      lo = _mm512_loadu_ps(p);
      hi = _mm512_loadu_ps(p + 16);
      return;
    }
    const float* q = p + columns->second_delta;
    lo = _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(static_cast<__mmask16>(columns->first), p),
                              static_cast<__mmask16>(columns->second), q);
    hi = _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(static_cast<__mmask16>(columns->first >> 16), p + 16),
                              static_cast<__mmask16>(columns->second >> 16), q + 16);
  }
  __attribute__((target("avx512f"), always_inline)) inline void store(float* p, __m512 lo, __m512 hi) const {
    if (columns == nullptr) {
      _mm512_storeu_ps(p, lo);
      _mm512_storeu_ps(p + 16, hi);
      return;
    }
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>(columns->first), lo);
    _mm512_mask_storeu_ps(p + 16, static_cast<__mmask16>(columns->first >> 16), hi);
    if (columns->second != 0) {
      float* q = p + columns->second_delta;
      _mm512_mask_storeu_ps(q, static_cast<__mmask16>(columns->second), lo);
      _mm512_mask_storeu_ps(q + 16, static_cast<__mmask16>(columns->second >> 16), hi);
    }
  }
};

template <int R>
__attribute__((target("avx512f"))) void tile(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc,
                                             int64_t /*rows: R*/, bool accumulate, const TileTail* tail,
                                             const TileColumns* columns) {
  __m512 lo[R], hi[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(pb + p * kNR), b1 = _mm512_load_ps(pb + p * kNR + 16);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(pa[p * R + r]);  // an exact panel of R rows
      lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
    }
  }
  // Unrolled, as the loops above: a loop indexing the accumulators by a variable keeps them on the stack.
  const Row io{columns};
  const bool stream = tail != nullptr && tail->stream && columns == nullptr &&
                      ((reinterpret_cast<uintptr_t>(c) | static_cast<uintptr_t>(ldc * 4)) & 63) == 0;
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      __m512 old_lo, old_hi;
      io.load(row, old_lo, old_hi);
      lo[r] = _mm512_add_ps(old_lo, lo[r]);
      hi[r] = _mm512_add_ps(old_hi, hi[r]);
    }
    if (tail != nullptr) {
      if (tail->bias != nullptr) {
        const __m512 b = _mm512_set1_ps(tail->bias[r]);
        lo[r] = _mm512_add_ps(lo[r], b);
        hi[r] = _mm512_add_ps(hi[r], b);
      }
      lo[r] = activate_avx512(tail->activation, lo[r]);
      hi[r] = activate_avx512(tail->activation, hi[r]);
      if (tail->residual != nullptr) {
        __m512 res_lo, res_hi;
        io.load(tail->residual + r * tail->ldr, res_lo, res_hi);
        lo[r] = _mm512_add_ps(lo[r], res_lo);
        hi[r] = _mm512_add_ps(hi[r], res_hi);
      }
      lo[r] = activate_avx512(tail->post_activation, lo[r]);
      hi[r] = activate_avx512(tail->post_activation, hi[r]);
    }
    if (stream) {
      _mm512_stream_ps(row, lo[r]);
      _mm512_stream_ps(row + 16, hi[r]);
    } else {
      io.store(row, lo[r], hi[r]);
    }
  }
}

template <int... R>
void run_rows(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows, bool accumulate,
              const TileTail* tail, const TileColumns* columns, std::integer_sequence<int, R...>) {
  static constexpr TileFn kByRows[] = {tile<R + 1>...};
  kByRows[rows - 1](kc, pa, pb, c, ldc, rows, accumulate, tail, columns);
}

void run(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows, bool accumulate,
         const TileTail* tail, const TileColumns* columns) {
  run_rows(kc, pa, pb, c, ldc, rows, accumulate, tail, columns, std::make_integer_sequence<int, kMR>{});
}

}  // namespace

void tile_store_fence() {
  _mm_sfence();
}

TileKernel tile_kernel_avx512() {
  return {kMR, kNR, run, "avx512 12x32", true, true};
}

}  // namespace tessera::kernels::conv_detail

#endif  // TESSERA_X86_KERNELS
