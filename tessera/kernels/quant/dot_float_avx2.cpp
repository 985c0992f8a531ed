// AVX2 dot products for float weight rows (F32, F16, BF16) against f32 activation rows: eight weights
// widened per step (F16C for f16, a 16-bit shift for bf16) and fused into eight f32 accumulators per
// activation row. The portable loop converted one value at a time and summed in double, which left f16
// models at a few percent of memory speed.
#include "tessera/kernels/quant/dot.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "tessera/core/half.h"

#define TESSERA_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace tessera::kernels::quant {

namespace {

using tessera::quant::GgmlType;

template <GgmlType T>
TESSERA_AVX2 inline __m256 load8(const uint8_t* p) {
  if constexpr (T == GgmlType::f32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (T == GgmlType::f16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {  // bf16: the high half of an f32
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
}

template <GgmlType T>
inline float load1(const uint8_t* p) {
  if constexpr (T == GgmlType::f32) {
    return load_as<float>(p);
  } else if constexpr (T == GgmlType::f16) {
    return f16_bits_to_f32(load_as<uint16_t>(p));
  } else {
    return bf16_bits_to_f32(load_as<uint16_t>(p));
  }
}

TESSERA_AVX2 inline float hsum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

template <GgmlType T>
TESSERA_AVX2 void dot_rows(int64_t n, const uint8_t* const* w, int nw, const ActRows& act, float* out) {
  constexpr int64_t kSize = T == GgmlType::f32 ? 4 : 2;
  for (int i = 0; i < nw; ++i) {
    __m256 acc[kMaxRows];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      const __m256 wv = load8<T>(w[i] + j * kSize);
      for (int r = 0; r < act.rows; ++r) {
        const float* x = reinterpret_cast<const float*>(act.data + r * act.stride) + j;
        acc[r] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x), acc[r]);
      }
    }
    for (int r = 0; r < act.rows; ++r) {
      float s = hsum8(acc[r]);
      const float* x = reinterpret_cast<const float*>(act.data + r * act.stride);
      for (int64_t t = j; t < n; ++t) s += load1<T>(w[i] + t * kSize) * x[t];
      out[i * act.rows + r] = s;
    }
  }
}

}  // namespace

DotFn avx2_float_dot(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return dot_rows<GgmlType::f32>;
    case GgmlType::f16:
      return dot_rows<GgmlType::f16>;
    case GgmlType::bf16:
      return dot_rows<GgmlType::bf16>;
    default:
      return nullptr;
  }
}

}  // namespace tessera::kernels::quant

#else

namespace tessera::kernels::quant {
DotFn avx2_float_dot(tessera::quant::GgmlType) {
  return nullptr;
}
}  // namespace tessera::kernels::quant

#endif
