// AVX-512 dot products for float weight rows (F32, F16, BF16) against f32 activation rows, for decode
// and the few-row products below the f16 GEMM: sixteen weights widened per step (vcvtph2ps zmm for
// f16) and every weight row of a call advanced together, so that decode's four weight streams are
// read side by side with a separate FMA chain each (the AVX2 form's eight lanes per step took twice
// the instructions per byte).
#include "tessera/kernels/quant/dot.h"

#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/core/half.h"
#include "tessera/kernels/quant/avx512_vectors.h"

#define TESSERA_AVX512 __attribute__((target("avx512f")))

namespace tessera::kernels::quant {

namespace {

using tessera::quant::GgmlType;

// Widening uses the maskz forms with a full mask: GCC 12's unmasked ones trip -Wmaybe-uninitialized
// inside its own header (they pass _mm512_undefined_ps()).
template <GgmlType T>
TESSERA_AVX512 inline __m512 load16(const uint8_t* p) {
  if constexpr (T == GgmlType::f32) {
    return _mm512_loadu_ps(p);
  } else if constexpr (T == GgmlType::f16) {
    return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  } else {  // bf16: the high half of an f32
    const __m512i wide = _mm512_maskz_cvtepu16_epi32(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, wide, 16));
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

// Each weight stream is prefetched this many bytes ahead: with four rows per core the hardware
// prefetchers alone reached 24 GB/s on a 32 MiB matrix and this 28 (two threads, Sapphire Rapids).
constexpr int64_t kPrefetchBytes = 1024;

// NW weight rows against R activation rows.
template <GgmlType T, int NW, int R>
TESSERA_AVX512 void dot_tile(int64_t n, const uint8_t* const* w, const ActRows& act, float* out) {
  constexpr int64_t kSize = T == GgmlType::f32 ? 4 : 2;
  const float* x[R];
  for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const float*>(act.data + r * act.stride);
  __m512 acc[NW][R];
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < R; ++r) acc[i][r] = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512 xv[R];
    for (int r = 0; r < R; ++r) xv[r] = _mm512_loadu_ps(x[r] + j);
    for (int i = 0; i < NW; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(w[i] + j * kSize + kPrefetchBytes), _MM_HINT_T0);
      const __m512 wv = load16<T>(w[i] + j * kSize);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_fmadd_ps(wv, xv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) {
      float s = hsum16(acc[i][r]);
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

DotFn avx512_float_dot(GgmlType type) {
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
DotFn avx512_float_dot(tessera::quant::GgmlType) {
  return nullptr;
}
}  // namespace tessera::kernels::quant

#endif
