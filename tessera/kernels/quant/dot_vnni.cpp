// AVX-512 (BW + VNNI) forms of the row-layout dot products (dot_avx2.cpp has the AVX2 ones). For now
// Q6_K, which has no x8 layout and is in every Q4_K_M / Q5_K_M file (the output matrix, attn_v and
// about half the ffn_down matrices): with 256-bit vectors its prefill ran at a quarter of Q4_K's rate
// and, in a Q4_K_M model, took about as long as all the Q4_K matrices together.
//
// A 512-bit vector holds 64 consecutive values of a block, so the Q8_K activation codes load as they
// are; the 6-bit codes are rebuilt from the low nibbles and the high 2-bit planes with per-half shifts,
// maddubs multiplies them (unsigned, 0..63) by the activations into 16-bit pair sums, and vpdpwssd
// multiplies those by the 16-value groups' scales and adds them, where AVX2 needs a madd and an add.
// The -32 offset comes off through the activation group sums (bsums), as in the AVX2 kernel.
#include "tessera/kernels/cpu/x86_kernels.h"
#include "tessera/kernels/quant/dot.h"
#include "tessera/quant/blocks.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/kernels/quant/avx512_vectors.h"

#define TESSERA_VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))

namespace tessera::kernels::quant {

namespace {

constexpr int64_t kQ8KBytes = sizeof(tessera::quant::BlockQ8_K);
constexpr int64_t kQ6KBytes = 210;
constexpr int64_t kPrefetchBytes = 2048;  // as the AVX2 row kernels (dot_avx2.cpp)

// 32 bytes at p in both halves of a 512-bit vector.
TESSERA_VNNI inline __m512i both_halves(const uint8_t* p) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return join(v, v);
}

// Per 16-bit lane: the shift `lo` in the low 256 bits, `hi` in the high 256.
TESSERA_VNNI inline __m512i half_shifts(short lo, short hi) {
  return join(_mm256_set1_epi16(lo), _mm256_set1_epi16(hi));
}

// For vector v (values 64v..64v+63): 16-bit lane j holds the index of group 4v + j / 8, so that a
// vpermw over the block's 16 scales gives each 16-value group's pair sums their scale.
struct ScaleIndex {
  alignas(64) int16_t lanes[4][32];
};
constexpr ScaleIndex kScaleIndex = [] {
  ScaleIndex t{};
  for (int v = 0; v < 4; ++v) {
    for (int j = 0; j < 32; ++j) t.lanes[v][j] = static_cast<int16_t>(4 * v + j / 8);
  }
  return t;
}();

// Q6_K blocks (210 bytes: 128 bytes ql, 64 bytes qh, 16 int8 scales, f16 d) against Q8_K activations
// (f32 d, 256 codes, 16 int16 group sums).
template <int NW, int R>
TESSERA_VNNI void dot_q6_k(int64_t nb, const uint8_t* const* w, const ActRows& act, float* out) {
  __m512 acc[NW][R];
  for (auto& row : acc) {
    for (__m512& a : row) a = _mm512_setzero_ps();
  }
  const __m512i low4 = _mm512_set1_epi8(0x0F), two = _mm512_set1_epi8(3);
  // ql byte t of a half holds values t (low nibble) and t + 64 (high nibble) of that half's 128; qh
  // byte t (t < 32) holds the top bits of values t, t + 32, t + 64, t + 96 at bits 0, 2, 4, 6.
  const __m512i top_low = half_shifts(0, 2), top_high = half_shifts(4, 6);
  __m512i index[4];
  for (int v = 0; v < 4; ++v) index[v] = _mm512_load_si512(kScaleIndex.lanes[v]);
  for (int64_t b = 0; b < nb; ++b) {
    for (int i = 0; i < NW; ++i) {
      const uint8_t* wb = w[i] + b * kQ6KBytes;
      for (int line = 0; line < kQ6KBytes; line += 64)
        _mm_prefetch(reinterpret_cast<const char*>(wb + kPrefetchBytes + line), _MM_HINT_T0);
      __m512i q[4];  // values 64v..64v+63
      for (int h = 0; h < 2; ++h) {
        const __m512i low = _mm512_loadu_si512(wb + 64 * h), top = both_halves(wb + 128 + 32 * h);
        const __m512i top_a = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(top, top_low), two), 4);
        const __m512i top_b = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(top, top_high), two), 4);
        q[2 * h] = _mm512_ternarylogic_epi32(low, top_a, low4, 0xEC);  // (low & low4) | top_a
        q[2 * h + 1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(low, 4), top_b, low4, 0xEC);
      }
      const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 192)));
      const __m512i scales = widen(scales16);
      __m512i scale[4];
      for (int v = 0; v < 4; ++v) scale[v] = _mm512_maskz_permutexvar_epi16(0xFFFFFFFF, index[v], scales);
      const float d = _cvtsh_ss(load_as<uint16_t>(wb + 208));
      for (int r = 0; r < R; ++r) {
        const uint8_t* ab = act.data + r * act.stride + b * kQ8KBytes;
        __m512i sumi = _mm512_setzero_si512();
        for (int v = 0; v < 4; ++v) {
          const __m512i pairs = _mm512_maddubs_epi16(q[v], _mm512_loadu_si512(ab + 4 + 64 * v));
          sumi = _mm512_dpwssd_epi32(sumi, pairs, scale[v]);
        }
        // Subtract 32 * sum_g scale_g * bsum_g.
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 260));
        sumi = _mm512_sub_epi32(sumi, widen(_mm256_slli_epi32(_mm256_madd_epi16(scales16, bsums), 5)));
        const __m512 dots = _mm512_maskz_cvtepi32_ps(0xFFFF, sumi);
        acc[i][r] = _mm512_fmadd_ps(_mm512_set1_ps(d * act.scales[r * nb + b]), dots, acc[i][r]);
      }
    }
  }
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) out[i * R + r] = hsum16(acc[i][r]);
  }
}

template <int NW, int R>
struct Q6_KKernel {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, float* o) { dot_q6_k<NW, R>(nb, w, a, o); }
};

}  // namespace

DotFn vnni_dot(tessera::quant::GgmlType type) {
  if (type == tessera::quant::GgmlType::q6_k) return run_rows<Q6_KKernel>;
  return nullptr;
}

}  // namespace tessera::kernels::quant

#else  // no x86 kernels

namespace tessera::kernels::quant {
DotFn vnni_dot(tessera::quant::GgmlType) {
  return nullptr;
}
}  // namespace tessera::kernels::quant

#endif
