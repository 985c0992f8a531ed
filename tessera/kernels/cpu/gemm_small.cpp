// SGEMM for a few rows of C (batch-1/batch-4 inference): C has so few rows that each element of B is
// used at most a handful of times, so packing B would cost as much as the multiply. B is streamed
// once, in its own layout:
//   op(B) = B   (k x n): rank-4 updates of an L1-resident row accumulator, reading rows of B in order;
//   op(B) = B^T (n x k): dot products of an A row with 4 contiguous rows of B at a time (8 for a
//   single row of A, with bias and relu applied in registers).
#include <algorithm>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/gemm_internal.h"
#include "tessera/kernels/cpu/vec_math.h"
#include "tessera/runtime/thread_scratch.h"

namespace tessera::kernels::gemm_detail {
namespace {

// Rows of A per pass over B, and the largest m for which the unpacked path beats packing (measured
// with a 1024x784 B on one thread: m = 8 gives 48 against 27 GFLOP/s with B as is and 52 against 33
// with B^T; m = 16 gives 51 against 41 and 53 against 49; at m = 24 packing wins).
constexpr int64_t kMaxSmallRows = 8;
constexpr int64_t kSmallPathMaxM = 16;
constexpr int64_t kColumnBlock = 512;  // accumulator: kMaxSmallRows x 512 floats = 16 KiB of L1
alignas(64) const float kZeros[kColumnBlock] = {};

// Rows of op(A) as contiguous k-vectors: a view into A when it is row-major, else a copy in the
// thread's scratch (reserved by compiled executables, so steady-state calls do not allocate).
const float* contiguous_a_rows(const MatrixView& a, int64_t m, int64_t k, int64_t& row_stride) {
  if (!a.trans) {
    row_stride = a.ld;
    return a.data;
  }
  float* copy = runtime::thread_scratch_of<float>(runtime::ScratchSlot::gemm_rows, static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) copy[i * k + p] = a.data[p * a.ld + i];
  row_stride = k;
  return copy;
}

void store_result(float* c, const float* acc, int64_t cols, float alpha, float beta) {
  if (beta == 0.0f) {
    for (int64_t j = 0; j < cols; ++j) c[j] = alpha * acc[j];
  } else {
    for (int64_t j = 0; j < cols; ++j) c[j] = alpha * acc[j] + beta * c[j];
  }
}

// ---- portable versions -------------------------------------------------------------------------
void rows_times_b_generic(const MatrixView& a, const MatrixView& b, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                          int64_t k, float* acc) {
  std::fill(acc, acc + rows * kColumnBlock, 0.0f);
  for (int64_t p = 0; p < k; ++p) {
    const float* brow = b.data + p * b.ld + j0;
    for (int64_t r = 0; r < rows; ++r) {
      const float av = a.at(i0 + r, p);
      float* out = acc + r * kColumnBlock;
      for (int64_t j = 0; j < cols; ++j) out[j] += av * brow[j];
    }
  }
}

float dot_generic(const float* x, const float* y, int64_t k) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    s0 += x[p] * y[p];
    s1 += x[p + 1] * y[p + 1];
    s2 += x[p + 2] * y[p + 2];
    s3 += x[p + 3] * y[p + 3];
  }
  for (; p < k; ++p) s0 += x[p] * y[p];
  return (s0 + s1) + (s2 + s3);
}

// ---- AVX2 versions -----------------------------------------------------------------------------
#if TESSERA_X86_KERNELS
alignas(32) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

__attribute__((target("avx2,fma"))) inline __m256i tail_mask(int64_t remaining) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - remaining));
}

// acc[r][0:cols] = sum_p op(A)[i0 + r, p] * B[p, j0 : j0 + cols], four rows of B per pass.
__attribute__((target("avx2,fma"))) void rows_times_b_avx2(const MatrixView& a, const MatrixView& b, int64_t i0,
                                                           int64_t rows, int64_t j0, int64_t cols, int64_t k,
                                                           float* acc) {
  std::fill(acc, acc + rows * kColumnBlock, 0.0f);
  const int64_t full = cols / 8 * 8;
  const __m256i mask = tail_mask(cols - full);
  int64_t p = 0;
  for (; p < k; p += 4) {
    const int64_t depth = std::min<int64_t>(4, k - p);
    // Past the end of k, read zeros (not a repeat of B, whose inf/NaN times 0 would leak in).
    const float* b0 = b.data + p * b.ld + j0;
    const float* b1 = depth > 1 ? b0 + b.ld : kZeros;
    const float* b2 = depth > 2 ? b1 + b.ld : kZeros;
    const float* b3 = depth > 3 ? b2 + b.ld : kZeros;
    for (int64_t r = 0; r < rows; ++r) {
      const __m256 a0 = _mm256_set1_ps(a.at(i0 + r, p));
      const __m256 a1 = _mm256_set1_ps(depth > 1 ? a.at(i0 + r, p + 1) : 0.0f);
      const __m256 a2 = _mm256_set1_ps(depth > 2 ? a.at(i0 + r, p + 2) : 0.0f);
      const __m256 a3 = _mm256_set1_ps(depth > 3 ? a.at(i0 + r, p + 3) : 0.0f);
      float* out = acc + r * kColumnBlock;
      int64_t j = 0;
      for (; j < full; j += 8) {
        __m256 s = _mm256_load_ps(out + j);
        s = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b0 + j), s);
        s = _mm256_fmadd_ps(a1, _mm256_loadu_ps(b1 + j), s);
        s = _mm256_fmadd_ps(a2, _mm256_loadu_ps(b2 + j), s);
        s = _mm256_fmadd_ps(a3, _mm256_loadu_ps(b3 + j), s);
        _mm256_store_ps(out + j, s);
      }
      if (j < cols) {
        __m256 s = _mm256_load_ps(out + j);
        s = _mm256_fmadd_ps(a0, _mm256_maskload_ps(b0 + j, mask), s);
        s = _mm256_fmadd_ps(a1, _mm256_maskload_ps(b1 + j, mask), s);
        s = _mm256_fmadd_ps(a2, _mm256_maskload_ps(b2 + j, mask), s);
        s = _mm256_fmadd_ps(a3, _mm256_maskload_ps(b3 + j, mask), s);
        _mm256_store_ps(out + j, s);
      }
    }
  }
}

__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// out[c] = dot(x, y_c) for four contiguous k-vectors y_0..y_3 (row stride ldy).
__attribute__((target("avx2,fma"))) void dot4_avx2(const float* x, const float* y, int64_t ldy, int64_t k, float* out) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  const float *y0 = y, *y1 = y + ldy, *y2 = y + 2 * ldy, *y3 = y + 3 * ldy;
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) {
    const __m256 xv = _mm256_loadu_ps(x + p);
    s0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y0 + p), s0);
    s1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y1 + p), s1);
    s2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y2 + p), s2);
    s3 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y3 + p), s3);
  }
  if (p < k) {
    const __m256i mask = tail_mask(k - p);
    const __m256 xv = _mm256_maskload_ps(x + p, mask);
    s0 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(y0 + p, mask), s0);
    s1 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(y1 + p, mask), s1);
    s2 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(y2 + p, mask), s2);
    s3 = _mm256_fmadd_ps(xv, _mm256_maskload_ps(y3 + p, mask), s3);
  }
  out[0] = hsum(s0);
  out[1] = hsum(s1);
  out[2] = hsum(s2);
  out[3] = hsum(s3);
}

// out[c] = dot(x, y_c) for eight contiguous k-vectors y_0..y_7 (row stride ldy): the batch-1 GEMV.
// Eight independent FMA chains hide the FMA latency (four chains cap the loop at one FMA per cycle,
// about the rate at which L3 delivers B), and one x load serves eight rows of B.
__attribute__((target("avx2,fma"))) void dot8_avx2(const float* x, const float* y, int64_t ldy, int64_t k, float* out) {
  __m256 s[8];
  for (auto& v : s) v = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) {
    const __m256 xv = _mm256_loadu_ps(x + p);
    for (int r = 0; r < 8; ++r) s[r] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y + r * ldy + p), s[r]);
  }
  if (p < k) {
    const __m256i mask = tail_mask(k - p);
    const __m256 xv = _mm256_maskload_ps(x + p, mask);
    for (int r = 0; r < 8; ++r) s[r] = _mm256_fmadd_ps(xv, _mm256_maskload_ps(y + r * ldy + p, mask), s[r]);
  }
  // Horizontal sums of all eight accumulators at once: pairwise adds leave row r's two half-sums
  // in lane r of the low and high 128-bit halves.
  const __m256 s01 = _mm256_hadd_ps(s[0], s[1]), s23 = _mm256_hadd_ps(s[2], s[3]);
  const __m256 s45 = _mm256_hadd_ps(s[4], s[5]), s67 = _mm256_hadd_ps(s[6], s[7]);
  const __m256 q0 = _mm256_hadd_ps(s01, s23), q1 = _mm256_hadd_ps(s45, s67);
  const __m256 lo = _mm256_permute2f128_ps(q0, q1, 0x20), hi = _mm256_permute2f128_ps(q0, q1, 0x31);
  _mm256_storeu_ps(out, _mm256_add_ps(lo, hi));
}

__attribute__((target("avx2,fma"), always_inline)) inline void fma2x4(__m256* s, __m256 a0, __m256 a1, __m256 b0,
                                                                      __m256 b1, __m256 b2, __m256 b3) {
  s[0] = _mm256_fmadd_ps(a0, b0, s[0]);
  s[1] = _mm256_fmadd_ps(a0, b1, s[1]);
  s[2] = _mm256_fmadd_ps(a0, b2, s[2]);
  s[3] = _mm256_fmadd_ps(a0, b3, s[3]);
  s[4] = _mm256_fmadd_ps(a1, b0, s[4]);
  s[5] = _mm256_fmadd_ps(a1, b1, s[5]);
  s[6] = _mm256_fmadd_ps(a1, b2, s[6]);
  s[7] = _mm256_fmadd_ps(a1, b3, s[7]);
}

// out[r * 4 + c] = dot(x_r, y_c) for two k-vectors x_0, x_1 (stride ldx) and four y_c (stride ldy):
// 8 accumulators fed by 6 loads, so the FMAs (not the loads) bound the loop.
__attribute__((target("avx2,fma"))) void dot2x4_avx2(const float* x, int64_t ldx, const float* y, int64_t ldy,
                                                     int64_t k, float* out) {
  __m256 s[8];
  for (auto& v : s) v = _mm256_setzero_ps();
  const float *x0 = x, *x1 = x + ldx;
  const float *y0 = y, *y1 = y + ldy, *y2 = y + 2 * ldy, *y3 = y + 3 * ldy;
  int64_t p = 0;
  for (; p + 8 <= k; p += 8)
    fma2x4(s, _mm256_loadu_ps(x0 + p), _mm256_loadu_ps(x1 + p), _mm256_loadu_ps(y0 + p), _mm256_loadu_ps(y1 + p),
           _mm256_loadu_ps(y2 + p), _mm256_loadu_ps(y3 + p));
  if (p < k) {
    const __m256i mask = tail_mask(k - p);
    fma2x4(s, _mm256_maskload_ps(x0 + p, mask), _mm256_maskload_ps(x1 + p, mask), _mm256_maskload_ps(y0 + p, mask),
           _mm256_maskload_ps(y1 + p, mask), _mm256_maskload_ps(y2 + p, mask), _mm256_maskload_ps(y3 + p, mask));
  }
  for (int i = 0; i < 8; ++i) out[i] = hsum(s[i]);
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* x, const float* y, int64_t k) {
  return vec::dot(x, y, static_cast<long>(k));
}

// C[0, j0:j1] for one row of A and B^T (the batch-1 layer y = W x with W stored [n, k]): eight
// columns per dot8_avx2. With alpha = 1 and beta = 0 (what the CPU backend passes) a bias and relu
// are applied in registers, the same operations in the same order as apply_epilogue, so the result
// is the same bits; anything else goes through store_result and apply_epilogue.
__attribute__((target("avx2,fma"))) void gemv_bt_avx2(const float* x, const MatrixView& b, int64_t j0, int64_t j1,
                                                      int64_t k, float alpha, float beta, float* c,
                                                      const GemmEpilogue& epilogue) {
  const bool fused = alpha == 1.0f && beta == 0.0f && epilogue.residual == nullptr &&
                     epilogue.post_activation == Activation::none &&
                     (epilogue.activation == Activation::none || epilogue.activation == Activation::relu);
  const bool relu = epilogue.activation == Activation::relu;
  const __m256 zero = _mm256_setzero_ps();
  int64_t j = j0;
  for (; j + 8 <= j1; j += 8) {
    alignas(32) float dots[8];
    dot8_avx2(x, b.data + j * b.ld, b.ld, k, dots);
    if (!fused) {
      store_result(c + j, dots, 8, alpha, beta);
      apply_epilogue(c, 0, 0, 1, j, 8, epilogue);
      continue;
    }
    __m256 v = _mm256_load_ps(dots);
    if (epilogue.bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(epilogue.bias + j));
    if (relu) v = _mm256_max_ps(zero, v);  // max(0, NaN) is NaN and max(0, -0) is -0, as in the scalar relu
    _mm256_storeu_ps(c + j, v);
  }
  for (; j + 4 <= j1; j += 4) {
    float dots[4];
    dot4_avx2(x, b.data + j * b.ld, b.ld, k, dots);
    store_result(c + j, dots, 4, alpha, beta);
    apply_epilogue(c, 0, 0, 1, j, 4, epilogue);
  }
  for (; j < j1; ++j) {
    const float d = dot_avx2(x, b.data + j * b.ld, k);
    store_result(c + j, &d, 1, alpha, beta);
    apply_epilogue(c, 0, 0, 1, j, 1, epilogue);
  }
}
#endif  // TESSERA_X86_KERNELS

}  // namespace

bool prefer_small_m(int64_t m, bool /*trans_b*/) {
  return m <= kSmallPathMaxM;
}

void sgemm_small_m(const MatrixView& a, const MatrixView& b, int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha,
                   float beta, float* c, int64_t ldc, const GemmEpilogue& epilogue) {
  [[maybe_unused]] const bool avx2 = use_avx2();
  // B^T with two rows and more: the AVX-512 dot products (one row keeps gemv_bt_avx2, whose bias and
  // relu are fused).
  [[maybe_unused]] const bool avx512 = use_avx512() && m >= 2;
  if (!b.trans) {
    alignas(64) float acc[kMaxSmallRows * kColumnBlock];
    for (int64_t i0 = 0; i0 < m; i0 += kMaxSmallRows) {
      const int64_t rows = std::min(kMaxSmallRows, m - i0);
      for (int64_t jb = j0; jb < j1; jb += kColumnBlock) {
        const int64_t cols = std::min(kColumnBlock, j1 - jb);
#if TESSERA_X86_KERNELS
        if (avx2) {
          rows_times_b_avx2(a, b, i0, rows, jb, cols, k, acc);
        } else
#endif
        {
          rows_times_b_generic(a, b, i0, rows, jb, cols, k, acc);
        }
        for (int64_t r = 0; r < rows; ++r)
          store_result(c + (i0 + r) * ldc + jb, acc + r * kColumnBlock, cols, alpha, beta);
      }
    }
  } else {
    int64_t lda_rows = 0;
    const float* arows = contiguous_a_rows(a, m, k, lda_rows);
#if TESSERA_X86_KERNELS
    if (m == 1 && avx2) {
      gemv_bt_avx2(arows, b, j0, j1, k, alpha, beta, c, epilogue);
      return;
    }
#endif
    for (int64_t j = j0; j < j1;) {
      const float* bcols = b.data + j * b.ld;
#if TESSERA_X86_KERNELS
      if (j + 4 <= j1 && avx512) {
        for (int64_t i = 0; i < m; i += 4) {
          const int64_t rows = std::min<int64_t>(4, m - i);
          float dots[16];
          dots_rows_by_4_avx512(arows + i * lda_rows, lda_rows, rows, bcols, b.ld, k, dots);
          for (int64_t r = 0; r < rows; ++r) store_result(c + (i + r) * ldc + j, dots + 4 * r, 4, alpha, beta);
        }
        j += 4;
      } else if (j + 4 <= j1 && avx2) {
        int64_t i = 0;
        for (; i + 2 <= m; i += 2) {
          float dots[8];
          dot2x4_avx2(arows + i * lda_rows, lda_rows, bcols, b.ld, k, dots);
          store_result(c + i * ldc + j, dots, 4, alpha, beta);
          store_result(c + (i + 1) * ldc + j, dots + 4, 4, alpha, beta);
        }
        if (i < m) {
          float dots[4];
          dot4_avx2(arows + i * lda_rows, bcols, b.ld, k, dots);
          store_result(c + i * ldc + j, dots, 4, alpha, beta);
        }
        j += 4;
      } else
#endif
      {
        for (int64_t i = 0; i < m; ++i) {
#if TESSERA_X86_KERNELS
          const float d = avx2 ? dot_avx2(arows + i * lda_rows, bcols, k) : dot_generic(arows + i * lda_rows, bcols, k);
#else
          const float d = dot_generic(arows + i * lda_rows, bcols, k);
#endif
          store_result(c + i * ldc + j, &d, 1, alpha, beta);
        }
        j += 1;
      }
    }
  }
  apply_epilogue(c, ldc, 0, m, j0, j1 - j0, epilogue);
}

}  // namespace tessera::kernels::gemm_detail
