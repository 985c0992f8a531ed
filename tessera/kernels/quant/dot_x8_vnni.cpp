// AVX-512 VNNI forms of the x8 Q4_0 and Q8_0 dot products (dot_x8_avx2.cpp has the layout and the
// loop structure): vpdpbusd multiplies four unsigned weight codes by four signed activation codes and
// adds them into a 32-bit lane in one instruction, where AVX2 needs maddubs, a 16-bit add and a madd.
// The integer sums are the same, so the results are bit-identical to the AVX2 kernels'. 256-bit
// vectors (avx512vl): the x8 layout puts eight rows in eight 32-bit lanes.
#include "tessera/kernels/quant/dot.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "tessera/quant/blocks.h"

#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#define TESSERA_VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))

namespace tessera::kernels::quant {

namespace {

constexpr int64_t kQ8_0Bytes = sizeof(tessera::quant::BlockQ8_0);
constexpr int64_t kPrefetchBytes = 4096;  // as the AVX2 kernels (dot_x8_avx2.cpp)

TESSERA_VNNI inline __m256i load256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

TESSERA_VNNI inline __m256i broadcast4(const uint8_t* p) {
  return _mm256_set1_epi32(load_as<int32_t>(p));
}

// Q4_0: codes 0..15 against signed activations, the -8 offset through the activation sums.
template <int R, int G>
TESSERA_VNNI void dot_q4_0_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t*, float* out) {
  __m256 acc[G][R];
  for (auto& group : acc) {
    for (__m256& a : group) a = _mm256_setzero_ps();
  }
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    for (int gi = 0; gi < G; ++gi) {
      const uint8_t* wb = w[gi] + b * 144;
      for (int i = 0; i < 3; ++i) _mm_prefetch(reinterpret_cast<const char*>(wb + kPrefetchBytes + 64 * i), _MM_HINT_T0);
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb)));
      __m256i lo[4], hi[4];
      for (int c = 0; c < 4; ++c) {
        const __m256i bits = load256(wb + 16 + 32 * c);
        lo[c] = _mm256_and_si256(bits, low4);
        hi[c] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
      }
      for (int r = 0; r < R; ++r) {
        const uint8_t* codes = act.data + r * act.stride + b * kQ8_0Bytes + 2;
        __m256i s = _mm256_setzero_si256();
        for (int c = 0; c < 4; ++c) {
          s = _mm256_dpbusd_epi32(s, lo[c], broadcast4(codes + 4 * c));
          s = _mm256_dpbusd_epi32(s, hi[c], broadcast4(codes + 16 + 4 * c));
        }
        const int64_t at = r * nb + b;
        const __m256 v = _mm256_fmsub_ps(_mm256_set1_ps(act.scales[at]), _mm256_cvtepi32_ps(s),
                                         _mm256_set1_ps(8.0f * act.sums[at]));
        acc[gi][r] = _mm256_fmadd_ps(dw, v, acc[gi][r]);
      }
    }
  }
  for (int gi = 0; gi < G; ++gi) {
    for (int r = 0; r < R; ++r) _mm256_storeu_ps(out + 8 * (gi * R + r), acc[gi][r]);
  }
}

// Q8_0: signed by signed, as |w| (unsigned) by the activations carrying w's sign.
template <int R, int G>
TESSERA_VNNI void dot_q8_0_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t*, float* out) {
  __m256 acc[G][R];
  for (auto& group : acc) {
    for (__m256& a : group) a = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < nb; ++b) {
    for (int gi = 0; gi < G; ++gi) {
      const uint8_t* wb = w[gi] + b * 272;
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb)));
      __m256i s[R];
      for (__m256i& v : s) v = _mm256_setzero_si256();
      for (int c = 0; c < 8; ++c) {
        const __m256i codes_w = load256(wb + 16 + 32 * c);
        const __m256i magnitude = _mm256_sign_epi8(codes_w, codes_w);
        for (int r = 0; r < R; ++r) {
          const __m256i a = broadcast4(act.data + r * act.stride + b * kQ8_0Bytes + 2 + 4 * c);
          s[r] = _mm256_dpbusd_epi32(s[r], magnitude, _mm256_sign_epi8(a, codes_w));
        }
      }
      for (int r = 0; r < R; ++r) {
        const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(act.scales[r * nb + b]));
        acc[gi][r] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s[r]), acc[gi][r]);
      }
    }
  }
  for (int gi = 0; gi < G; ++gi) {
    for (int r = 0; r < R; ++r) _mm256_storeu_ps(out + 8 * (gi * R + r), acc[gi][r]);
  }
}

template <int R, int G>
struct Q4_0X8 {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, const int32_t* gs, float* o) {
    dot_q4_0_x8<R, G>(nb, w, a, gs, o);
  }
};
template <int R, int G>
struct Q8_0X8 {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, const int32_t* gs, float* o) {
    dot_q8_0_x8<R, G>(nb, w, a, gs, o);
  }
};

}  // namespace

DotX8Fn vnni_dot_x8(tessera::quant::GgmlType type, int rows, int groups) {
  using tessera::quant::GgmlType;
  if (type == GgmlType::q4_0) return pick_x8<Q4_0X8>(rows, groups);
  if (type == GgmlType::q8_0) return pick_x8<Q8_0X8>(rows, groups);
  return nullptr;
}

}  // namespace tessera::kernels::quant

#else  // no x86 kernels

namespace tessera::kernels::quant {
DotX8Fn vnni_dot_x8(tessera::quant::GgmlType, int, int) {
  return nullptr;
}
}  // namespace tessera::kernels::quant

#endif
