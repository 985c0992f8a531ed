// AVX2 dot products for float weight rows (F32, F16, BF16) against f32 activation rows: eight weights
// widened per step (F16C for f16, a 16-bit shift for bf16) and fused into eight f32 accumulators per
// weight and activation row. The portable loop converted one value at a time and summed in double, which left f16
// models at a few percent of memory speed.
#include "tessera/kernels/quant/dot.h"

#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
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

// NW weight rows against R activation rows, all advanced together: decode's four weight streams are
// read side by side, each with its own FMA chain (one row after another left one chain and one stream
// in flight), and prefetched kPrefetchBytes ahead.
constexpr int64_t kPrefetchBytes = 1024;

template <GgmlType T, int NW, int R>
TESSERA_AVX2 void dot_tile(int64_t n, const uint8_t* const* w, const ActRows& act, float* out) {
  constexpr int64_t kSize = T == GgmlType::f32 ? 4 : 2;
  const float* x[R];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const float*>(act.data + r * act.stride);
  __m256 acc[NW][R];
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < R; ++r) acc[i][r] = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 xv[R];
    for (int r = 0; r < R; ++r) xv[r] = _mm256_loadu_ps(x[r] + j);
    for (int i = 0; i < NW; ++i) {
      if ((j * kSize) % 64 == 0) {
        _mm_prefetch(reinterpret_cast<const char*>(w[i] + j * kSize + kPrefetchBytes), _MM_HINT_T0);
      }
      const __m256 wv = load8<T>(w[i] + j * kSize);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm256_fmadd_ps(wv, xv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) {
      float s = hsum8(acc[i][r]);
      for (int64_t t = j; t < n; ++t) s += load1<T>(w[i] + t * kSize) * x[r][t];
      out[i * R + r] = s;
    }
  }
}

template <GgmlType T>
void dot_rows(int64_t n, const uint8_t* const* w, int nw, const ActRows& act, float* out) {
  if (nw == kDecodeRows) {
    dot_tile<T, kDecodeRows, 1>(n, w, act, out);
    return;
  }
  switch (act.rows) {
    case 1:
      dot_tile<T, 1, 1>(n, w, act, out);
      break;
    case 2:
      dot_tile<T, 1, 2>(n, w, act, out);
      break;
    case 3:
      dot_tile<T, 1, 3>(n, w, act, out);
      break;
    default:
      dot_tile<T, 1, 4>(n, w, act, out);
      break;
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
