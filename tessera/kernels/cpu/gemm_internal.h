#pragma once
// Pieces of Tessera's own SGEMM shared by its translation units: the register tile, the cache
// blocking, panel packing, micro-kernels and the epilogue. Not part of the public kernel API.
#include <cstdint>

#include "tessera/kernels/cpu/gemm.h"

namespace tessera::kernels::gemm_detail {

// Register tile: 6 rows x 16 columns = 12 AVX2 accumulators, plus 2 B vectors and an A broadcast.
constexpr int64_t kMR = 6;
constexpr int64_t kNR = 16;
// Cache blocking for a Zen 3 core (L1d 32 KiB, L2 512 KiB, L3 32 MiB shared): a KC x NR panel of B
// (16 KiB) stays in L1, an MC x KC block of A (~180 KiB) in L2, a KC x NC block of B in L3.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 180;   // multiple of kMR
constexpr int64_t kNC = 3072;  // multiple of kNR

// Row-major strided read access to op(A) / op(B) without materialising the transpose.
struct MatrixView {
  const float* data;
  int64_t ld;
  bool trans;
  float at(int64_t row, int64_t col) const { return trans ? data[col * ld + row] : data[row * ld + col]; }
};

// Packs op(A)[i0:i0+mc, p0:p0+kc] into ceil(mc/MR) panels of MR x kc, element (r, p) at p*MR + r;
// rows past mc are zero.
void pack_a(const MatrixView& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst);
// Packs op(B)[p0:p0+kc, j0:j0+nc] into ceil(nc/NR) panels of kc x NR, element (p, c) at p*NR + c;
// columns past nc are zero.
void pack_b(const MatrixView& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst);
// AVX2 versions of one full panel (gemm_pack_avx2.cpp). The A packers write up to two floats past the
// panel, so pack buffers keep kPackSlack floats of slack.
void pack_a_panel_avx2(const float* a, int64_t lda, int64_t kc, float* dst);
void pack_bt_panel_avx2(const float* b, int64_t ldb, int64_t kc, float* dst);
void pack_b_panel_avx2(const float* b, int64_t ldb, int64_t kc, float* dst);
void pack_at_panel_avx2(const float* a, int64_t lda, int64_t kc, float* dst);
constexpr int64_t kPackSlack = 64;

// c[MR x NR] = alpha * (pa · pb) + beta * c, where pa/pb are packed panels of depth kc. When beta is
// 0, c is not read (it may hold garbage or NaN).
using MicroKernel = void (*)(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, float alpha,
                             float beta);
void microkernel_generic(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, float alpha, float beta);
void microkernel_avx2(int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, float alpha, float beta);

// Applies bias, activation and residual to rows [i0, i0+rows) x columns [j0, j0+cols) of C.
void apply_epilogue(float* c, int64_t ldc, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                    const GemmEpilogue& epilogue);
bool epilogue_is_empty(const GemmEpilogue& epilogue);

// The unpacked path for few rows (batch-1 inference, GEMV-like): streams B once, no panel packing.
// Computes rows [0, m) and columns [j0, j1) of C including beta and the epilogue.
void sgemm_small_m(const MatrixView& a, const MatrixView& b, int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha,
                   float beta, float* c, int64_t ldc, const GemmEpilogue& epilogue);
// out[r * 4 + c] = dot(x row r, y row c) over k, for `rows` (1 to 4) rows of x (ldx apart) and four
// rows of y (ldy apart), with AVX-512 (gemm_small_bt_avx512.cpp; only called when use_avx512()).
void dots_rows_by_4_avx512(const float* x, int64_t ldx, int64_t rows, const float* y, int64_t ldy, int64_t k,
                           float* out);
// Whether sgemm_small_m is the better path for this shape.
bool prefer_small_m(int64_t m, bool trans_b);

// Tessera's packed SGEMM (no provider switch).
void sgemm_packed(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmEpilogue& epilogue,
                  runtime::ThreadPool& pool);

// OpenBLAS cblas_sgemm followed by the epilogue; only callable when openblas_available().
void sgemm_openblas(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                    const GemmEpilogue& epilogue, runtime::ThreadPool& pool);

}  // namespace tessera::kernels::gemm_detail
