// AVX2 packing for the two layouts that need a transpose: op(A) = A (rows of A become columns of
// an MR-panel) and op(B) = B^T (rows of B become columns of an NR-panel). Both move 8x8 blocks
// through registers with the classic unpack/shuffle/permute transpose.
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS  // x86 only: without it, use_avx2() is false and nothing calls these
#include <immintrin.h>

#include "tessera/kernels/cpu/gemm_internal.h"

namespace tessera::kernels::gemm_detail {

namespace {

// In-register transpose: on return r[i] holds element i of each of the eight input rows.
__attribute__((target("avx2,fma"), always_inline)) inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

}  // namespace

// One full MR-panel of A (rows i0..i0+5 of a row-major A, depth kc). The 8-float stores overlap the
// next k step by two floats, which that step then overwrites; the panel's final store writes two
// floats past its end (the pack buffers keep slack for that).
__attribute__((target("avx2,fma"))) void pack_a_panel_avx2(const float* a, int64_t lda, int64_t kc, float* dst) {
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8) {
    __m256 r[8];
    for (int i = 0; i < 6; ++i) r[i] = _mm256_loadu_ps(a + i * lda + p);
    r[6] = r[7] = _mm256_setzero_ps();
    transpose8(r);
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (p + i) * kMR, r[i]);
  }
  for (; p < kc; ++p)
    for (int i = 0; i < 6; ++i) dst[p * kMR + i] = a[i * lda + p];
}

// One full MR-panel of op(A) = A^T: six contiguous floats of each of kc rows of A (stride lda). The
// masked load never touches the two floats past them; the 8-float store spills two floats into the
// next k step (overwritten by it) or past the panel (the pack buffer's slack).
__attribute__((target("avx2,fma"))) void pack_at_panel_avx2(const float* a, int64_t lda, int64_t kc, float* dst) {
  const __m256i six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
  for (int64_t p = 0; p < kc; ++p) _mm256_storeu_ps(dst + p * kMR, _mm256_maskload_ps(a + p * lda, six));
}

// One full NR-panel of op(B) = B^T: the 16 rows j0..j0+15 of B (each contiguous along k) become the
// 16 columns of the panel.
__attribute__((target("avx2,fma"))) void pack_bt_panel_avx2(const float* b, int64_t ldb, int64_t kc, float* dst) {
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8) {
    for (int half = 0; half < 2; ++half) {
      __m256 r[8];
      for (int c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(b + (half * 8 + c) * ldb + p);
      transpose8(r);
      for (int i = 0; i < 8; ++i) _mm256_store_ps(dst + (p + i) * kNR + half * 8, r[i]);
    }
  }
  for (; p < kc; ++p)
    for (int c = 0; c < 16; ++c) dst[p * kNR + c] = b[c * ldb + p];
}

// One full NR-panel of op(B) = B: 16 contiguous floats of each of kc rows (row stride ldb). The rows
// are usually 4 KiB apart, which no hardware prefetcher follows, so while copying this panel we
// prefetch (into L2) the same rows' next 64 bytes: the next panel, packed after this one is used.
__attribute__((target("avx2,fma"))) void pack_b_panel_avx2(const float* b, int64_t ldb, int64_t kc, float* dst) {
  for (int64_t p = 0; p < kc; ++p) {
    const float* src = b + p * ldb;
    _mm_prefetch(reinterpret_cast<const char*>(src + kNR), _MM_HINT_T1);
    _mm256_store_ps(dst + p * kNR, _mm256_loadu_ps(src));
    _mm256_store_ps(dst + p * kNR + 8, _mm256_loadu_ps(src + 8));
  }
}

}  // namespace tessera::kernels::gemm_detail

#endif  // TESSERA_X86_KERNELS
