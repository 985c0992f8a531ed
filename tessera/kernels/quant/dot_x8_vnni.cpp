// AVX-512 VNNI forms of the x8 Q4_0, Q8_0 and Q4_K dot products (dot_x8_avx2.cpp has the layout and
// the loop structure). Two things make them cheaper per weight byte than AVX2's:
// - vpdpbusd multiplies four unsigned weight codes by four signed activation codes and adds them into a
//   32-bit lane in one instruction, where AVX2 needs maddubs, a 16-bit add and a madd;
// - 512-bit vectors take two 32-byte chunks of a group block at once: lanes 0-7 hold the eight rows of
//   chunk c, lanes 8-15 those of chunk c+1. The activation vector then needs chunk c's four codes in
//   the low half and chunk c+1's in the high half: one vpermd per pair, made once per block and
//   activation row and shared by every group of the call.
// Q4_0 and Q8_0 scale and accumulate both halves as floats and add them once at the end (per block,
// adding them first measured 17% slower at prefill on a Zen 5), so their results round differently from
// AVX2's. Q4_K adds the halves as integers once per 256 values, and its results are bit-identical to
// AVX2's. tests/gguf/test_quant_x8.cpp checks both against the exact product and Q4_K's bits.
#include "tessera/kernels/cpu/x86_kernels.h"
#include "tessera/kernels/quant/dot.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "tessera/quant/blocks.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/kernels/quant/avx512_vectors.h"
#include "tessera/kernels/quant/dot_x8_shared.h"

#define TESSERA_VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))

namespace tessera::kernels::quant {

namespace {

constexpr int64_t kQ8_0Bytes = sizeof(tessera::quant::BlockQ8_0), kQ8_KBytes = sizeof(tessera::quant::BlockQ8_K);

TESSERA_VNNI inline __m512i load512(const uint8_t* p) {
  return _mm512_loadu_si512(p);
}

// 32 activation codes (eight 32-bit words w0..w7) as the four vectors a block's chunk pairs meet:
// out[i] has word P.words[i][0] in lanes 0-7 and word P.words[i][1] in lanes 8-15. (The maskz forms with
// full masks here and below: see avx512_vectors.h.)
struct WordPairs {
  int words[4][2];
};

template <const WordPairs& P>
TESSERA_VNNI inline void spread_words(const uint8_t* codes, __m256i flip, __m512i out[4]) {
  const __m512i all = widen(_mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes)), flip));
  for (int i = 0; i < 4; ++i) {
    const int lo = P.words[i][0], hi = P.words[i][1];
    const __m512i index = _mm512_setr_epi32(lo, lo, lo, lo, lo, lo, lo, lo, hi, hi, hi, hi, hi, hi, hi, hi);
    out[i] = _mm512_maskz_permutexvar_epi32(0xFFFF, index, all);
  }
}

// The low and high 256-bit halves added: the eight rows' sums over both chunks of every pair.
TESSERA_VNNI inline __m256i add_halves(__m512i v) {
  return _mm256_add_epi32(_mm512_maskz_extracti64x4_epi64(0xFF, v, 0), _mm512_maskz_extracti64x4_epi64(0xFF, v, 1));
}

// The eight f32 scales (f16 in memory) of a group block.
TESSERA_VNNI inline __m256 scales8_at(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The same in both halves of a 512-bit vector.
TESSERA_VNNI inline __m512 scales16_at(const uint8_t* p) {
  return _mm512_maskz_cvtph_ps(0xFFFF,
                               _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// G x R float accumulators of Q4_0 and Q8_0: each half holds the eight rows of a group, summing
// different chunks; the halves are added once, when stored.
template <int R, int G>
struct SplitAccumulators {
  __m512 v[G][R];
  TESSERA_VNNI SplitAccumulators() {
    for (auto& group : v) {
      for (__m512& a : group) a = _mm512_setzero_ps();
    }
  }
  TESSERA_VNNI void store(float* out) const {
    for (int gi = 0; gi < G; ++gi) {
      for (int r = 0; r < R; ++r) {
        const __m512d both = _mm512_castps_pd(v[gi][r]);
        const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, both, 0));
        const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, both, 1));
        _mm256_storeu_ps(out + 8 * (gi * R + r), _mm256_add_ps(lo, hi));
      }
    }
  }
};

// ---- Q4_0: 144-byte group blocks, two 64-byte chunk pairs -------------------------------------------
// Pair 0 (chunks 0, 1): low nibbles are values 0-3 and 4-7 (words 0, 1), high nibbles 16-19 and 20-23
// (words 4, 5); pair 1 (chunks 2, 3): words 2, 3 and 6, 7. Codes 0..15 against signed activations;
// the -8 offset comes off through the activation sums, half of it in each half of the vector.
//
// Both kernels below take every group's codes first and then one activation row at a time: all rows'
// spread words at once would take sixteen registers and push the accumulators out to the stack. One
// chain of vpdpbusd per row and group (not two added) saves a register copy and an add.
constexpr WordPairs kQ4_0Words = {{{0, 1}, {4, 5}, {2, 3}, {6, 7}}};

template <int R, int G>
TESSERA_VNNI void dot_q4_0_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t*, float* out) {
  SplitAccumulators<R, G> acc;
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    __m512 dw[G];
    __m512i lo[G][2], hi[G][2];
    for (int gi = 0; gi < G; ++gi) {
      const uint8_t* wb = w[gi] + b * 144;
      x8::prefetch_lines(wb, 3);  // a block spans 2.25 lines
      dw[gi] = scales16_at(wb);
      for (int p = 0; p < 2; ++p) {
        const __m512i bits = load512(wb + 16 + 64 * p);
        lo[gi][p] = _mm512_and_si512(bits, low4);
        hi[gi][p] = _mm512_and_si512(_mm512_srli_epi16(bits, 4), low4);
      }
    }
    for (int r = 0; r < R; ++r) {
      __m512i a[4];
      spread_words<kQ4_0Words>(act.data + r * act.stride + b * kQ8_0Bytes + 2, _mm256_setzero_si256(), a);
      const int64_t at = r * nb + b;
      const __m512 da = _mm512_set1_ps(act.scales[at]), offset = _mm512_set1_ps(4.0f * act.sums[at]);
      for (int gi = 0; gi < G; ++gi) {
        __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[gi][0], a[0]);
        s = _mm512_dpbusd_epi32(s, hi[gi][0], a[1]);
        s = _mm512_dpbusd_epi32(s, lo[gi][1], a[2]);
        s = _mm512_dpbusd_epi32(s, hi[gi][1], a[3]);
        const __m512 v = _mm512_fmsub_ps(da, _mm512_maskz_cvtepi32_ps(0xFFFF, s), offset);
        acc.v[gi][r] = _mm512_fmadd_ps(dw[gi], v, acc.v[gi][r]);
      }
    }
  }
  acc.store(out);
}

// ---- Q8_0: 272-byte group blocks, four 64-byte chunk pairs ------------------------------------------
// Pair k holds values 8k..8k+7 (words 2k, 2k+1). Signed by signed: the activations are made unsigned
// (a + 128, an xor with 0x80) and 128 * sum(w), the same for every activation row, comes off again:
// each row's chain starts from its negation.
constexpr WordPairs kQ8_0Words = {{{0, 1}, {2, 3}, {4, 5}, {6, 7}}};

template <int R, int G>
TESSERA_VNNI void dot_q8_0_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t*, float* out) {
  SplitAccumulators<R, G> acc;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = 0; b < nb; ++b) {
    __m512 dw[G];
    __m512i codes[G][4], bias[G];
    for (int gi = 0; gi < G; ++gi) {
      // No software prefetch, as in AVX2's Q8_0 kernel.
      const uint8_t* wb = w[gi] + b * 272;
      dw[gi] = scales16_at(wb);
      __m512i sum = _mm512_setzero_si512();
      for (int k = 0; k < 4; ++k) {
        codes[gi][k] = load512(wb + 16 + 64 * k);
        sum = _mm512_dpbusd_epi32(sum, offset, codes[gi][k]);
      }
      bias[gi] = _mm512_sub_epi32(_mm512_setzero_si512(), sum);
    }
    for (int r = 0; r < R; ++r) {
      __m512i a[4];
      spread_words<kQ8_0Words>(act.data + r * act.stride + b * kQ8_0Bytes + 2, flip, a);
      const __m512 da = _mm512_set1_ps(act.scales[r * nb + b]);
      for (int gi = 0; gi < G; ++gi) {
        __m512i s = bias[gi];
        for (int k = 0; k < 4; ++k) s = _mm512_dpbusd_epi32(s, a[k], codes[gi][k]);
        acc.v[gi][r] = _mm512_fmadd_ps(_mm512_mul_ps(dw[gi], da), _mm512_maskz_cvtepi32_ps(0xFFFF, s), acc.v[gi][r]);
      }
    }
  }
  acc.store(out);
}

// ---- Q4_K: 1152-byte group blocks, per group of 32 values two 64-byte chunk pairs -------------------
// Chunk c of a group: low nibbles values 8c..8c+3 (word 2c), high nibbles 8c+4..8c+7 (word 2c+1). Pair
// 0 (chunks 0, 1) meets words 0, 2 and 1, 3; pair 1 (chunks 2, 3) words 4, 6 and 5, 7. A lane's sum over
// one group's two pairs covers 16 values, at most 15 * 127 * 16 = 30480 (Q8_K codes are within
// +-127): it fits 16 bits, so vpdpwssd multiplies it by the group's 6-bit scale and adds in one step.
constexpr WordPairs kQ4_KWords = {{{0, 2}, {1, 3}, {4, 6}, {5, 7}}};

template <int R, int G>
TESSERA_VNNI void dot_q4_k_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t* group_sums,
                              float* out) {
  __m256 acc[G][R];
  for (auto& group : acc) {
    for (__m256& a : group) a = _mm256_setzero_ps();
  }
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    // Each group's scale vector for the block, made first (the compiler keeps what it can of them in
    // registers and the rest on the stack, where vpdpwssd reads them as a memory operand).
    __m512i scale[G][8];
    for (int gi = 0; gi < G; ++gi) {
      const uint8_t* wb = w[gi] + b * 1152;
      x8::prefetch_lines(wb, 2);
      __m256i first, second;
      x8::expand_six_bit(wb + 32, &first, &second);
      // Each 256-bit table (rows 0-3 / 4-7 in its two lanes) in both halves.
      const __m512i tables[2] = {join(first, first), join(second, second)};
      for (int g = 0; g < 8; ++g) {
        const __m128i pick = _mm_load_si128(reinterpret_cast<const __m128i*>(x8::kScaleLowMask[g % 4]));
        scale[gi][g] = _mm512_shuffle_epi8(tables[g / 4], _mm512_maskz_broadcast_i32x4(0xFFFF, pick));
      }
    }
    __m512i sumi[G][R];
    for (auto& group : sumi) {
      for (__m512i& v : group) v = _mm512_setzero_si512();
    }
    // As in Q4_0's kernel: every group's codes first, then one activation row at a time.
    for (int g = 0; g < 8; ++g) {
      __m512i lo[G][2], hi[G][2];
      for (int gi = 0; gi < G; ++gi) {
        const uint8_t* wg = w[gi] + b * 1152 + 128 + 128 * g;
        x8::prefetch_lines(wg, 2);
        for (int p = 0; p < 2; ++p) {
          const __m512i bits = load512(wg + 64 * p);
          lo[gi][p] = _mm512_and_si512(bits, low4);
          hi[gi][p] = _mm512_and_si512(_mm512_srli_epi16(bits, 4), low4);
        }
      }
      for (int r = 0; r < R; ++r) {
        __m512i a[4];
        spread_words<kQ4_KWords>(act.data + r * act.stride + b * kQ8_KBytes + 4 + 32 * g, _mm256_setzero_si256(), a);
        for (int gi = 0; gi < G; ++gi) {
          __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[gi][0], a[0]);
          s = _mm512_dpbusd_epi32(s, hi[gi][0], a[1]);
          s = _mm512_dpbusd_epi32(s, lo[gi][1], a[2]);
          s = _mm512_dpbusd_epi32(s, hi[gi][1], a[3]);
          sumi[gi][r] = _mm512_dpwssd_epi32(sumi[gi][r], s, scale[gi][g]);
        }
      }
    }
    for (int gi = 0; gi < G; ++gi) {
      const uint8_t* wb = w[gi] + b * 1152;
      __m256i mins[2];
      x8::expand_six_bit(wb + 80, &mins[0], &mins[1]);
      const __m256 d = scales8_at(wb), dmin = scales8_at(wb + 16);
      for (int r = 0; r < R; ++r) {
        const __m256i min_sum = x8::min_sums(mins, group_sums + (r * nb + b) * 4);
        const __m256 da = _mm256_set1_ps(act.scales[r * nb + b]);
        acc[gi][r] = _mm256_fmadd_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(add_halves(sumi[gi][r])), acc[gi][r]);
        acc[gi][r] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, da), _mm256_cvtepi32_ps(min_sum), acc[gi][r]);
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
template <int R, int G>
struct Q4_KX8 {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, const int32_t* gs, float* o) {
    dot_q4_k_x8<R, G>(nb, w, a, gs, o);
  }
};

}  // namespace

DotX8Fn vnni_dot_x8(tessera::quant::GgmlType type, int rows, int groups) {
  using tessera::quant::GgmlType;
  if (type == GgmlType::q4_0) return pick_x8<Q4_0X8>(rows, groups);
  if (type == GgmlType::q8_0) return pick_x8<Q8_0X8>(rows, groups);
  if (type == GgmlType::q4_k) return pick_x8<Q4_KX8>(rows, groups);
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
