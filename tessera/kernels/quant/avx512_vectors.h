#pragma once
// Internal to tessera/kernels/quant, x86 builds only: small AVX-512 vector helpers shared by the
// AVX-512 kernel files. They use the maskz forms with full masks, or go through memory: GCC 12's
// unmasked lane inserts, casts, zero-extensions and _mm512_reduce_add_ps trip -Wmaybe-uninitialized
// (or -Wuninitialized) inside its own header.
#include <immintrin.h>

#define TESSERA_AVX512F_HELPER __attribute__((target("avx512f"))) inline

namespace tessera::kernels::quant {

// A 512-bit vector of `lo` (low 256 bits) and `hi` (high 256 bits).
TESSERA_AVX512F_HELPER __m512i join(__m256i lo, __m256i hi) {
  return _mm512_maskz_inserti64x4(0xFF, _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), lo, 0), hi, 1);
}

// A 256-bit vector in the low half of a 512-bit one, the high half zero.
TESSERA_AVX512F_HELPER __m512i widen(__m256i v) {
  return _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), v, 0);
}

// The sum of the 16 floats, through memory. Once per dot product, so the round trip does not matter.
TESSERA_AVX512F_HELPER float hsum16(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  const __m128 q = _mm_add_ps(_mm_add_ps(_mm_load_ps(lanes), _mm_load_ps(lanes + 4)),
                              _mm_add_ps(_mm_load_ps(lanes + 8), _mm_load_ps(lanes + 12)));
  const __m128 h = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

}  // namespace tessera::kernels::quant

#undef TESSERA_AVX512F_HELPER
