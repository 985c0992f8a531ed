// The AVX2/FMA 6x16 SGEMM micro-kernel: 12 ymm accumulators, per k step two B loads and six A
// broadcasts feed 12 FMAs (Zen 3 issues two FMAs per cycle, so 12 independent chains hide the
// 4-cycle FMA latency). Compiled for AVX2 only in this function; callers check use_avx2() first.
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS  // x86 only: without it, use_avx2() is false and nothing calls these
#include <immintrin.h>

#include "tessera/kernels/cpu/gemm_internal.h"

namespace tessera::kernels::gemm_detail {

namespace {
__attribute__((target("avx2,fma"), always_inline)) inline void store_row(float* c, __m256 lo, __m256 hi, __m256 alpha,
                                                                         __m256 beta, bool read_c) {
  lo = _mm256_mul_ps(lo, alpha);
  hi = _mm256_mul_ps(hi, alpha);
  if (read_c) {
    lo = _mm256_fmadd_ps(beta, _mm256_loadu_ps(c), lo);
    hi = _mm256_fmadd_ps(beta, _mm256_loadu_ps(c + 8), hi);
  }
  _mm256_storeu_ps(c, lo);
  _mm256_storeu_ps(c + 8, hi);
}
}  // namespace

__attribute__((target("avx2,fma"))) void microkernel_avx2(int64_t kc, const float* pa, const float* pb, float* c,
                                                          int64_t ldc, float alpha, float beta) {
  // C is read (or written) only after the k loop: start pulling its six rows in now, so the misses
  // overlap with the FMAs instead of stalling the stores.
  for (int64_t r = 0; r < kMR; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 15), _MM_HINT_T0);
  }

  // The k loop is inline assembly: GCC's register allocator spills two of the twelve accumulators
  // of the equivalent intrinsics code, which puts a store-forwarding round trip on an FMA chain.
  // Accumulators live in ymm4..ymm15 (row r in ymm4+2r, ymm5+2r) and are stored to `acc` at the end.
  alignas(32) float acc[kMR * kNR];
  // clang-format off
#define TESSERA_GEMM_STEP(P)                          \
  "vmovaps " #P "*64(%[pb]), %%ymm0\n\t"             \
  "vmovaps " #P "*64+32(%[pb]), %%ymm1\n\t"          \
  "vbroadcastss " #P "*24+0(%[pa]), %%ymm2\n\t"   \
  "vfmadd231ps %%ymm0, %%ymm2, %%ymm4\n\t"        \
  "vfmadd231ps %%ymm1, %%ymm2, %%ymm5\n\t"        \
  "vbroadcastss " #P "*24+4(%[pa]), %%ymm2\n\t"   \
  "vfmadd231ps %%ymm0, %%ymm2, %%ymm6\n\t"        \
  "vfmadd231ps %%ymm1, %%ymm2, %%ymm7\n\t"        \
  "vbroadcastss " #P "*24+8(%[pa]), %%ymm2\n\t"   \
  "vfmadd231ps %%ymm0, %%ymm2, %%ymm8\n\t"        \
  "vfmadd231ps %%ymm1, %%ymm2, %%ymm9\n\t"        \
  "vbroadcastss " #P "*24+12(%[pa]), %%ymm2\n\t"  \
  "vfmadd231ps %%ymm0, %%ymm2, %%ymm10\n\t"       \
  "vfmadd231ps %%ymm1, %%ymm2, %%ymm11\n\t"       \
  "vbroadcastss " #P "*24+16(%[pa]), %%ymm2\n\t"  \
  "vfmadd231ps %%ymm0, %%ymm2, %%ymm12\n\t"       \
  "vfmadd231ps %%ymm1, %%ymm2, %%ymm13\n\t"       \
  "vbroadcastss " #P "*24+20(%[pa]), %%ymm2\n\t"  \
  "vfmadd231ps %%ymm0, %%ymm2, %%ymm14\n\t"       \
  "vfmadd231ps %%ymm1, %%ymm2, %%ymm15\n\t"

  int64_t blocks = kc / 4, rest = kc % 4;
  asm volatile(
      "vxorps %%ymm4, %%ymm4, %%ymm4\n\t"
      "vxorps %%ymm5, %%ymm5, %%ymm5\n\t"
      "vxorps %%ymm6, %%ymm6, %%ymm6\n\t"
      "vxorps %%ymm7, %%ymm7, %%ymm7\n\t"
      "vxorps %%ymm8, %%ymm8, %%ymm8\n\t"
      "vxorps %%ymm9, %%ymm9, %%ymm9\n\t"
      "vxorps %%ymm10, %%ymm10, %%ymm10\n\t"
      "vxorps %%ymm11, %%ymm11, %%ymm11\n\t"
      "vxorps %%ymm12, %%ymm12, %%ymm12\n\t"
      "vxorps %%ymm13, %%ymm13, %%ymm13\n\t"
      "vxorps %%ymm14, %%ymm14, %%ymm14\n\t"
      "vxorps %%ymm15, %%ymm15, %%ymm15\n\t"
      "test %[blocks], %[blocks]\n\t"
      "jz 2f\n\t"
      ".p2align 5\n\t"
      "1:\n\t"
      "prefetcht0 384(%[pa])\n\t"
      TESSERA_GEMM_STEP(0) TESSERA_GEMM_STEP(1) TESSERA_GEMM_STEP(2) TESSERA_GEMM_STEP(3)
      "add $96, %[pa]\n\t"
      "add $256, %[pb]\n\t"
      "dec %[blocks]\n\t"
      "jnz 1b\n\t"
      "2:\n\t"
      "test %[rest], %[rest]\n\t"
      "jz 4f\n\t"
      "3:\n\t"
      TESSERA_GEMM_STEP(0)
      "add $24, %[pa]\n\t"
      "add $64, %[pb]\n\t"
      "dec %[rest]\n\t"
      "jnz 3b\n\t"
      "4:\n\t"
      "vmovaps %%ymm4, 0(%[acc])\n\t"
      "vmovaps %%ymm5, 32(%[acc])\n\t"
      "vmovaps %%ymm6, 64(%[acc])\n\t"
      "vmovaps %%ymm7, 96(%[acc])\n\t"
      "vmovaps %%ymm8, 128(%[acc])\n\t"
      "vmovaps %%ymm9, 160(%[acc])\n\t"
      "vmovaps %%ymm10, 192(%[acc])\n\t"
      "vmovaps %%ymm11, 224(%[acc])\n\t"
      "vmovaps %%ymm12, 256(%[acc])\n\t"
      "vmovaps %%ymm13, 288(%[acc])\n\t"
      "vmovaps %%ymm14, 320(%[acc])\n\t"
      "vmovaps %%ymm15, 352(%[acc])\n\t"
      : [pa] "+r"(pa), [pb] "+r"(pb), [blocks] "+r"(blocks), [rest] "+r"(rest)
      : [acc] "r"(acc)
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15");
  // clang-format on
#undef TESSERA_GEMM_STEP

  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const bool read_c = beta != 0.0f;
  for (int64_t r = 0; r < kMR; ++r)
    store_row(c + r * ldc, _mm256_load_ps(acc + r * kNR), _mm256_load_ps(acc + r * kNR + 8), va, vb, read_c);
}

}  // namespace tessera::kernels::gemm_detail

#endif  // TESSERA_X86_KERNELS
