// AVX2 dot products of one weight row with up to four activation rows (Q4_0·Q8_0, Q8_0·Q8_0,
// Q4_K·Q8_K, Q6_K·Q8_K). Each weight block is unpacked to bytes once and multiplied with every
// activation row by _mm256_maddubs_epi16 (unsigned x signed bytes -> 16-bit pair sums, which cannot
// saturate for these value ranges), widened by _mm256_madd_epi16 and scaled in float. Compiled for
// AVX2/FMA/F16C per function; quantized_matmul calls these only when use_avx2() says the CPU has them.
#include "tessera/kernels/quant/dot.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "tessera/quant/blocks.h"

#define TESSERA_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace tessera::kernels::quant {

namespace {

using tessera::quant::kQK;
using tessera::quant::kQKK;

TESSERA_AVX2 inline float h2f(const uint8_t* p) { return _cvtsh_ss(load_as<uint16_t>(p)); }

TESSERA_AVX2 inline float hsum(__m256 v) {
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// Sum of products of signed bytes w and a, as 8 floats: maddubs needs an unsigned first operand, so
// the sign of w moves onto a.
TESSERA_AVX2 inline __m256 signed_dot(__m256i w_abs, __m256i w, __m256i a) {
  const __m256i prod16 = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(a, w));
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(prod16, _mm256_set1_epi16(1)));
}

// Q4_0 (18-byte blocks: f16 d, 16 bytes of nibbles) and Q8_0 (34-byte blocks: f16 d, 32 int8) weights
// against Q8_0 activations. Q4_0 codes stay unsigned (0..15) for maddubs and the -8 offset is applied
// once per block through the activation block's code sum; Q8_0 codes are signed, so their sign moves
// onto the activations. Two blocks per iteration with separate accumulators, so that consecutive
// blocks' multiply-add chains overlap.
template <int R, bool kQ4>
TESSERA_AVX2 void dot_legacy_rows(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  constexpr int64_t kWBytes = kQ4 ? 18 : 34;
  __m256 acc[2][R];
  float offset[R] = {};
  for (int u = 0; u < 2; ++u) {
    for (int r = 0; r < R; ++r) acc[u][r] = _mm256_setzero_ps();
  }
  const __m256i ones = _mm256_set1_epi16(1);
  const auto step = [&](int64_t b, int u) TESSERA_AVX2 {
    const uint8_t* wb = w + b * kWBytes;
    const float dw = h2f(wb);
    if constexpr (kQ4) {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 2));
      const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
      for (int r = 0; r < R; ++r) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.data + r * act.stride + b * 34 + 2));
        const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(q, a), ones));
        acc[u][r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * act.scales[r * nb + b]), dot, acc[u][r]);
        offset[r] += dw * act.sums[r * nb + b];
      }
    } else {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 2));
      const __m256i q_abs = _mm256_sign_epi8(q, q);
      for (int r = 0; r < R; ++r) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.data + r * act.stride + b * 34 + 2));
        acc[u][r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * act.scales[r * nb + b]), signed_dot(q_abs, q, a), acc[u][r]);
      }
    }
  };
  int64_t b = 0;
  for (; b + 1 < nb; b += 2) {
    step(b, 0);
    step(b + 1, 1);
  }
  if (b < nb) step(b, 0);
  for (int r = 0; r < R; ++r) out[r] = hsum(_mm256_add_ps(acc[0][r], acc[1][r])) - 8.0f * offset[r];
}

// Q8_K activation block: f32 d at 0, 256 int8 at 4, 16 int16 group sums at 260.
constexpr int64_t kQ8KBytes = 292;

// Unpacks the 6-bit scales and mins of a Q4_K block (12 bytes) into 8 + 8 bytes.
TESSERA_AVX2 inline void k4_scales(const uint8_t* packed, uint8_t sc[8], uint8_t m[8]) {
  uint32_t u[3];
  std::memcpy(u, packed, 12);
  constexpr uint32_t k6 = 0x3f3f3f3f, k4 = 0x0f0f0f0f, k2 = 0x03030303;
  const uint32_t s0 = u[0] & k6;                              // scales 0-3
  const uint32_t m0 = u[1] & k6;                              // mins 0-3
  const uint32_t s1 = (u[2] & k4) | (((u[0] >> 6) & k2) << 4);  // scales 4-7
  const uint32_t m1 = ((u[2] >> 4) & k4) | (((u[1] >> 6) & k2) << 4);  // mins 4-7
  std::memcpy(sc, &s0, 4);
  std::memcpy(sc + 4, &s1, 4);
  std::memcpy(m, &m0, 4);
  std::memcpy(m + 4, &m1, 4);
}

// Q4_K (144-byte blocks: f16 d, f16 dmin, 12 bytes of scales, 128 bytes of nibbles) against Q8_K.
template <int R>
TESSERA_AVX2 void dot_q4_k_rows(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  __m256 acc[R];
  __m128 acc_m[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm256_setzero_ps();
    acc_m[r] = _mm_setzero_ps();
  }
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* wb = w + b * 144;
    const float d = h2f(wb), dmin = h2f(wb + 2);
    alignas(16) uint8_t sc[8], mn[8];
    k4_scales(wb + 4, sc, mn);
    const __m128i mins16 = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)));
    __m256i q[8], scale[8];
    for (int c = 0; c < 4; ++c) {
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 16 + 32 * c));
      q[2 * c] = _mm256_and_si256(bits, low4);
      q[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
    }
    for (int g = 0; g < 8; ++g) scale[g] = _mm256_set1_epi16(sc[g]);
    for (int r = 0; r < R; ++r) {
      const uint8_t* ab = act.data + r * act.stride + b * kQ8KBytes;
      const float da = act.scales[r * nb + b];
      __m256i sumi = _mm256_setzero_si256();
      for (int g = 0; g < 8; ++g) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 4 + 32 * g));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(scale[g], _mm256_maddubs_epi16(q[g], a)));
      }
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(sumi), acc[r]);
      // Minimum terms: sum over groups of min_g * (sum of the group's 32 activations).
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 260));
      const __m128i pair_sums = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
      const __m128i prod = _mm_madd_epi16(mins16, pair_sums);
      acc_m[r] = _mm_fmadd_ps(_mm_set1_ps(-dmin * da), _mm_cvtepi32_ps(prod), acc_m[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m128 m4 = acc_m[r];
    const __m128 m2 = _mm_add_ps(m4, _mm_movehl_ps(m4, m4));
    out[r] = hsum(acc[r]) + _mm_cvtss_f32(_mm_add_ss(m2, _mm_movehdup_ps(m2)));
  }
}

// Q6_K (210-byte blocks: 128 bytes ql, 64 bytes qh, 16 int8 scales, f16 d) against Q8_K. Values are
// kept unsigned (0..63) for maddubs; the -32 offset is applied through the activation group sums.
template <int R>
TESSERA_AVX2 void dot_q6_k_rows(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(3);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* wb = w + b * 210;
    const int8_t* scales = reinterpret_cast<const int8_t*>(wb + 192);
    const float d = h2f(wb + 208);
    __m256i q[8];  // 8 vectors of 32 values, in value order
    for (int half = 0; half < 2; ++half) {
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 64 * half));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 64 * half + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 128 + 32 * half));
      q[4 * half + 0] = _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(h, two), 4));
      q[4 * half + 1] = _mm256_or_si256(_mm256_and_si256(l1, low4),
                                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), two), 4));
      q[4 * half + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), two), 4));
      q[4 * half + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), two), 4));
    }
    // Scale pairs: vector v holds groups 2v (first 16 values) and 2v+1 (last 16).
    __m256i scale[8];
    for (int v = 0; v < 8; ++v) {
      scale[v] = _mm256_set_m128i(_mm_set1_epi16(scales[2 * v + 1]), _mm_set1_epi16(scales[2 * v]));
    }
    const __m128i scales16 = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)));
    const __m128i scales16_hi = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8)));
    for (int r = 0; r < R; ++r) {
      const uint8_t* ab = act.data + r * act.stride + b * kQ8KBytes;
      const float da = act.scales[r * nb + b];
      __m256i sumi = _mm256_setzero_si256();
      for (int v = 0; v < 8; ++v) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 4 + 32 * v));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(scale[v], _mm256_maddubs_epi16(q[v], a)));
      }
      // Subtract 32 * sum_g scale_g * bsum_g.
      const __m128i bs_lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ab + 260));
      const __m128i bs_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ab + 276));
      const __m128i corr = _mm_add_epi32(_mm_madd_epi16(scales16, bs_lo), _mm_madd_epi16(scales16_hi, bs_hi));
      const __m256i corr32 = _mm256_set_m128i(_mm_setzero_si128(), _mm_slli_epi32(corr, 5));
      sumi = _mm256_sub_epi32(sumi, corr32);
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(sumi), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]);
}

using RowsFn = void (*)(int64_t, const uint8_t*, const ActRows&, float*);

template <RowsFn F1, RowsFn F2, RowsFn F3, RowsFn F4>
void by_rows(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  switch (act.rows) {
    case 1: F1(nb, w, act, out); return;
    case 2: F2(nb, w, act, out); return;
    case 3: F3(nb, w, act, out); return;
    default: F4(nb, w, act, out); return;
  }
}

}  // namespace

DotFn avx2_dot(tessera::quant::GgmlType type) {
  using tessera::quant::GgmlType;
  switch (type) {
    case GgmlType::q4_0:
      return by_rows<dot_legacy_rows<1, true>, dot_legacy_rows<2, true>, dot_legacy_rows<3, true>,
                     dot_legacy_rows<4, true>>;
    case GgmlType::q8_0:
      return by_rows<dot_legacy_rows<1, false>, dot_legacy_rows<2, false>, dot_legacy_rows<3, false>,
                     dot_legacy_rows<4, false>>;
    case GgmlType::q4_k: return by_rows<dot_q4_k_rows<1>, dot_q4_k_rows<2>, dot_q4_k_rows<3>, dot_q4_k_rows<4>>;
    case GgmlType::q6_k: return by_rows<dot_q6_k_rows<1>, dot_q6_k_rows<2>, dot_q6_k_rows<3>, dot_q6_k_rows<4>>;
    default: return nullptr;
  }
}

}  // namespace tessera::kernels::quant

#else  // not x86-64: no AVX2 kernels

namespace tessera::kernels::quant {
DotFn avx2_dot(tessera::quant::GgmlType) { return nullptr; }
}  // namespace tessera::kernels::quant

#endif
