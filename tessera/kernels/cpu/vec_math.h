#pragma once
// AVX2 vector math shared by the kernels (internal). Include only from translation units whose
// callers check use_avx2(); every function is compiled for AVX2/FMA on its own. Empty in builds
// without the x86 kernels (x86_kernels.h).
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

namespace tessera::kernels::vec {

#define TESSERA_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

// e^x to about 2 ulp over the float range (Cephes-style: 2^n times a degree-6 polynomial on
// |r| <= ln2/2). NaN propagates; below about -88 the result is ~0, above 88 it is inf-like.
TESSERA_AVX2 __m256 exp(__m256 x) {
  // min/max return their second operand when one is NaN: keep x second so NaN passes through.
  x = _mm256_min_ps(_mm256_set1_ps(88.3762626647949f), x);
  x = _mm256_max_ps(_mm256_set1_ps(-88.3762626647949f), x);
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  // r = x - n ln2 with ln2 split in two parts for precision.
  __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i n = _mm256_cvttps_epi32(fx);
  const __m256i pow2n = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(pow2n));
}

TESSERA_AVX2 float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// Horizontal max; NaN in any lane gives NaN.
TESSERA_AVX2 float hmax(__m256 v) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  float m = lanes[0];
  for (int i = 1; i < 8; ++i) m = (lanes[i] > m || lanes[i] != lanes[i]) ? lanes[i] : m;
  return m;
}

// Loads/stores of the first `n` < 8 lanes (the rest read as 0).
TESSERA_AVX2 __m256i tail_mask(long n) {
  alignas(32) static const int kMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + 8 - n));
}

// sum of x[p] * y[p] over p < k (two accumulators, masked tail).
TESSERA_AVX2 float dot(const float* x, const float* y, long k) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  long p = 0;
  for (; p + 16 <= k; p += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), _mm256_loadu_ps(y + p), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p + 8), _mm256_loadu_ps(y + p + 8), s1);
  }
  for (; p + 8 <= k; p += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), _mm256_loadu_ps(y + p), s0);
  if (p < k) {
    const __m256i mask = tail_mask(k - p);
    s1 = _mm256_fmadd_ps(_mm256_maskload_ps(x + p, mask), _mm256_maskload_ps(y + p, mask), s1);
  }
  return hsum(_mm256_add_ps(s0, s1));
}

// y = y * c + a * x over n values.
TESSERA_AVX2 void scale_add(float* y, float c, float a, const float* x, long n) {
  const __m256 vc = _mm256_set1_ps(c), va = _mm256_set1_ps(a);
  long p = 0;
  for (; p + 8 <= n; p += 8) {
    _mm256_storeu_ps(y + p, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + p), _mm256_mul_ps(vc, _mm256_loadu_ps(y + p))));
  }
  for (; p < n; ++p) y[p] = y[p] * c + a * x[p];
}

}  // namespace tessera::kernels::vec

#endif  // TESSERA_X86_KERNELS
