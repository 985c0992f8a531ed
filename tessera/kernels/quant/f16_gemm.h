#pragma once
// Internal to tessera/kernels/quant: the product of many activation rows with F16 weights as a packed
// SGEMM (f16_gemm.cpp). Each panel of weight rows is widened to f32 once and then reused by every
// activation row, where the row-by-row dot products convert every weight again for each group of four.
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels::quant {

// One ISA's register tile: mr activation rows by nr weight rows.
struct F16Tile {
  int64_t mr, nr;
  // c[rows x cols] (row stride ldc) = (accumulate ? c : 0) + pa · pb over depth kc, where pa is a packed
  // activation panel (element (p, r) at p * mr + r) and pb a packed weight panel (element (p, j) at
  // p * nr + j); rows <= mr, cols <= nr, and panel entries past them are zero.
  void (*run)(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, int64_t rows, int64_t cols,
              bool accumulate);
};
F16Tile avx2_f16_tile();    // 6 x 16: Tessera's SGEMM micro-kernel (f16_tile_avx2.cpp)
F16Tile avx512_f16_tile();  // 12 x 32 with zmm accumulators (f16_tile_avx512.cpp)

// Widens columns [0, kc) of `rows` f16 weight rows (row stride ldw elements) into a panel of nr columns
// (a multiple of 8): element (p, j) at dst[p * nr + j], zero for j >= rows. AVX2 + F16C.
void pack_f16_panel(const uint16_t* w, int64_t ldw, int64_t rows, int64_t kc, int64_t nr, float* dst);

// Whether f16_gemm is the faster path for m activation rows on this CPU (needs AVX2).
bool f16_gemm_applies(int64_t m);
// y[m, n] = x[m, k] · W[n, k]^T for F16 weights W (n rows of k values).
void f16_gemm(const uint16_t* w, int64_t n, int64_t k, const float* x, int64_t m, float* y,
              runtime::ThreadPool& pool);

}  // namespace tessera::kernels::quant
