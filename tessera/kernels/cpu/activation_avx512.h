#pragma once
// The activations the AVX-512 convolution tiles apply in registers, one definition for all of them.
// relu keeps -0 and NaN (x < 0 ? 0 : x): maxps returns its second operand for equal zeros and NaN.
// relu6 turns -0 into +0 and keeps NaN, as maximum(x, 0) then minimum(., 6) do. (The maskz forms with
// a full mask: GCC 12's unmasked ones trip -Wmaybe-uninitialized inside its own header.)
// Include only where TESSERA_X86_KERNELS is set (x86_kernels.h).
#include <immintrin.h>

#include "tessera/kernels/cpu/gemm.h"

namespace tessera::kernels {

__attribute__((target("avx512f"), always_inline)) inline __m512 activate_avx512(Activation a, __m512 x) {
  if (a == Activation::relu) return _mm512_maskz_max_ps(0xFFFF, _mm512_setzero_ps(), x);
  if (a == Activation::relu6) {
    const __m512 r =
        _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, x, _mm512_setzero_ps()), _mm512_set1_ps(6.0f));
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
  }
  return x;
}

// Whether activate_avx512 computes `a` (the others run per value after the store).
inline bool activation_in_registers(Activation a) {
  return a == Activation::none || a == Activation::relu || a == Activation::relu6;
}

}  // namespace tessera::kernels
