#pragma once
// Internal to tessera/kernels/quant, x86 builds only: the sum of a 512-bit vector's 16 floats.
#include <immintrin.h>

namespace tessera::kernels::quant {

// Through memory: GCC 12's lane shuffles and _mm512_reduce_add_ps trip -Wuninitialized inside its own
// header. Once per dot product, so the round trip does not matter.
__attribute__((target("avx512f"))) inline float hsum16(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  const __m128 q = _mm_add_ps(_mm_add_ps(_mm_load_ps(lanes), _mm_load_ps(lanes + 4)),
                              _mm_add_ps(_mm_load_ps(lanes + 8), _mm_load_ps(lanes + 12)));
  const __m128 h = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

}  // namespace tessera::kernels::quant
