// AVX2 dot products (Q4_0·Q8_0, Q8_0·Q8_0, Q4_K·Q8_K, Q6_K·Q8_K) of NW weight rows with R activation
// rows: one weight row with up to four activation rows (prefill: each unpacked weight block is reused
// four times), or four weight rows with one activation row (decode: four independent memory streams
// keep more reads in flight than one, which this machine needs to approach its bandwidth). Products
// use _mm256_maddubs_epi16 (unsigned x signed bytes -> 16-bit pair sums, which cannot saturate for
// these value ranges), widened by _mm256_madd_epi16 and scaled in float. Compiled for AVX2/FMA/F16C
// per function; quantized_matmul calls these only when use_avx2() says the CPU has them.
#include "tessera/kernels/quant/dot.h"

#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#define TESSERA_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace tessera::kernels::quant {

namespace {

TESSERA_AVX2 inline float h2f(const uint8_t* p) {
  return _cvtsh_ss(load_as<uint16_t>(p));
}

TESSERA_AVX2 inline float hsum(__m256 v) {
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

TESSERA_AVX2 inline float hsum(__m128 v) {
  const __m128 s2 = _mm_add_ps(v, _mm_movehl_ps(v, v));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

TESSERA_AVX2 inline __m256i load256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Sum of unsigned bytes u times signed bytes a, pairwise then to 8 x i32.
TESSERA_AVX2 inline __m256i dot_u8_i8(__m256i u, __m256i a) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, a), _mm256_set1_epi16(1));
}

// Weights stream from memory once: each loop asks for the bytes kPrefetchBytes ahead of those it is
// about to use (past a row's end is harmless), so the loads overlap the arithmetic. 2 KiB measured
// best with the first kernels (512 B: -15%, none: -25% of bandwidth); with the leaner decode kernels
// the hardware prefetcher alone does about as well, within this shared machine's noise.
constexpr int64_t kPrefetchBytes = 2048;

TESSERA_AVX2 inline void prefetch(const uint8_t* p, int64_t bytes) {
  for (int64_t line = 0; line < bytes; line += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + line), _MM_HINT_T0);
  }
}

// The f16 scales at the start of four consecutive blocks, as f32. Gathered in general-purpose registers:
// the 32-bit word that ends at a block's scale carries it in its upper half, so two loads, a mask and an
// OR give two scales, and the vector units (this code's bottleneck) only see one move and one convert.
template <int64_t kBlockBytes>
TESSERA_AVX2 inline __m128 four_block_scales(const uint8_t* wb) {
  static_assert(kBlockBytes >= 4, "a block must hold its scale and two more bytes");
  const uint64_t d01 = load_as<uint16_t>(wb) | (load_as<uint32_t>(wb + kBlockBytes - 2) & 0xFFFF0000u);
  const uint64_t d23 =
      load_as<uint16_t>(wb + 2 * kBlockBytes) | (load_as<uint32_t>(wb + 3 * kBlockBytes - 2) & 0xFFFF0000u);
  return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(d01 | (d23 << 32))));
}

// ---- Q4_0 (18-byte blocks: f16 d, 16 bytes of nibbles) and Q8_0 (34 bytes: f16 d, 32 int8) ----------
// Q4_0 codes stay unsigned (0..15) for maddubs and the -8 offset is applied through the activation
// blocks' code sums; Q8_0 codes are signed, so their sign moves onto the activations. Blocks go four
// at a time: their four f16 scales convert in one instruction and the scale products come from one
// vector multiply.
template <bool kQ4>
TESSERA_AVX2 inline __m256 legacy_dot(const uint8_t* wb, const uint8_t* ab) {
  const __m256i a = load256(ab + 2);
  if constexpr (kQ4) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 2));
    const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
    return _mm256_cvtepi32_ps(dot_u8_i8(q, a));
  } else {
    const __m256i q = load256(wb + 2);
    return _mm256_cvtepi32_ps(dot_u8_i8(_mm256_sign_epi8(q, q), _mm256_sign_epi8(a, q)));
  }
}

template <int NW, int R, bool kQ4>
TESSERA_AVX2 void dot_legacy(int64_t nb, const uint8_t* const* w, const ActRows& act, float* out) {
  constexpr int64_t kWBytes = kQ4 ? 18 : 34;
  __m256 acc[NW][R];
  __m128 offset4[NW][R];
  float offset[NW][R] = {};
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) {
      acc[i][r] = _mm256_setzero_ps();
      offset4[i][r] = _mm_setzero_ps();
    }
  }
  int64_t b = 0;
  for (; b + 4 <= nb; b += 4) {
    for (int i = 0; i < NW; ++i) {
      const uint8_t* wb = w[i] + b * kWBytes;
      prefetch(wb, 4 * kWBytes);
      const __m128 dw4 = four_block_scales<kWBytes>(wb);
      for (int r = 0; r < R; ++r) {
        alignas(16) float d[4];
        _mm_store_ps(d, _mm_mul_ps(dw4, _mm_loadu_ps(act.scales + r * nb + b)));
        if constexpr (kQ4) offset4[i][r] = _mm_fmadd_ps(dw4, _mm_loadu_ps(act.sums + r * nb + b), offset4[i][r]);
        const uint8_t* ab = act.data + r * act.stride + b * 34;
        for (int u = 0; u < 4; ++u) {
          acc[i][r] =
              _mm256_fmadd_ps(_mm256_broadcast_ss(&d[u]), legacy_dot<kQ4>(wb + u * kWBytes, ab + 34 * u), acc[i][r]);
        }
      }
    }
  }
  for (; b < nb; ++b) {
    for (int i = 0; i < NW; ++i) {
      const uint8_t* wb = w[i] + b * kWBytes;
      const float dw = h2f(wb);
      for (int r = 0; r < R; ++r) {
        const __m256 dot = legacy_dot<kQ4>(wb, act.data + r * act.stride + b * 34);
        acc[i][r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * act.scales[r * nb + b]), dot, acc[i][r]);
        if constexpr (kQ4) offset[i][r] += dw * act.sums[r * nb + b];
      }
    }
  }
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) {
      float sum = hsum(acc[i][r]);
      if constexpr (kQ4) sum -= 8.0f * (offset[i][r] + hsum(offset4[i][r]));
      out[i * R + r] = sum;
    }
  }
}

// ---- Q4_0 decode: four weight rows against one activation row laid out in pairs of blocks -----------
// (ActRows::q4_pairs). One register holds the low nibbles of two weight blocks (two 16-byte loads, one
// AND) and meets both blocks' activation codes 0-15 in one maddubs; the high nibbles meet codes 16-31.
// The two products add exactly in 16 bits, the precomputed 8 * (code pair sums) removes Q4_0's -8
// offset there, one madd widens to 32 bits, and lanes 0-3 / 4-7 then belong to the first / second
// block: one convert and one FMA with [d0 x4, d1 x4] finish two blocks. That is about 9 instructions
// per block where dot_legacy needs 14, and this kernel is bound by instructions, not memory.
TESSERA_AVX2 inline __m256 q4_0_pair(const uint8_t* wb, const uint8_t* pair) {
  const __m256i raw =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 2))),
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 18 + 2)), 1);
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(raw, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble);
  const __m256i sum16 =
      _mm256_add_epi16(_mm256_maddubs_epi16(lo, load256(pair)), _mm256_maddubs_epi16(hi, load256(pair + 32)));
  const __m256i centred = _mm256_sub_epi16(sum16, load256(pair + 64));
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(centred, _mm256_set1_epi16(1)));
}

template <int NW>
TESSERA_AVX2 void dot_q4_0_decode(int64_t nb, const uint8_t* const* w, const ActRows& act, float* out) {
  constexpr int64_t kWBytes = 18;
  const __m256i first = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
  const __m256i second = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
  __m256 acc[NW];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  const int64_t paired = nb / 4 * 4;
  for (int64_t b = 0; b < paired; b += 4) {
    const uint8_t* pairs = act.q4_pairs + b / 2 * kQ4PairBytes;
    const __m128 da = _mm_loadu_ps(act.scales + b);
    for (int i = 0; i < NW; ++i) {
      const uint8_t* wb = w[i] + b * kWBytes;
      prefetch(wb, 4 * kWBytes);
      const __m128 dw = four_block_scales<kWBytes>(wb);
      const __m256 d = _mm256_castps128_ps256(_mm_mul_ps(dw, da));
      acc[i] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(d, first), q4_0_pair(wb, pairs), acc[i]);
      acc[i] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(d, second), q4_0_pair(wb + 2 * kWBytes, pairs + kQ4PairBytes),
                               acc[i]);
    }
  }
  for (int i = 0; i < NW; ++i) {
    float offset = 0.0f;
    for (int64_t b = paired; b < nb; ++b) {  // the last nb % 4 blocks, from the plain layout
      const uint8_t* wb = w[i] + b * kWBytes;
      const float dw = h2f(wb);
      acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(dw * act.scales[b]), legacy_dot<true>(wb, act.data + b * 34), acc[i]);
      offset += dw * act.sums[b];
    }
    out[i] = hsum(acc[i]) - 8.0f * offset;
  }
}

// ---- Q4_K (144-byte blocks: f16 d, f16 dmin, 12 bytes of scales, 128 bytes of nibbles) -----------------
// Q8_K activation block: f32 d at 0, 256 int8 at 4, 16 int16 group sums at 260.
constexpr int64_t kQ8KBytes = 292;

// Unpacks the 6-bit scales and mins of a Q4_K block (12 bytes, read as 32-bit words u0, u1, u2) into
// bytes 0-7 (scales) and 8-15 (mins) of a vector: scales 0-3 = u0 & 0x3f.., mins 0-3 = u1 & 0x3f..,
// scales 4-7 = (u2 & 0x0f..) | top bits of u0, mins 4-7 = (u2 >> 4 & 0x0f..) | top bits of u1. In vector
// registers this takes nine instructions where general-purpose code took about twenty-five, and this
// kernel is bound by how many instructions the core can issue.
TESSERA_AVX2 inline __m128i k4_scales_and_mins(const uint8_t* packed) {
  const __m128i u = _mm_set_epi64x(load_as<uint32_t>(packed + 8), load_as<uint64_t>(packed));  // u0 u1 u2 0
  const __m128i low6 = _mm_and_si128(u, _mm_set1_epi8(0x3f));                                // s0-3, m0-3
  const __m128i u2 = _mm_shuffle_epi32(u, _MM_SHUFFLE(2, 2, 2, 2));
  const __m128i u2_nibbles = _mm_and_si128(_mm_srlv_epi32(u2, _mm_setr_epi32(0, 4, 0, 0)), _mm_set1_epi8(0x0f));
  const __m128i top2 = _mm_and_si128(_mm_srli_epi32(u, 2), _mm_set1_epi8(0x30));  // (u >> 6 & 3) << 4, per byte
  const __m128i high = _mm_or_si128(u2_nibbles, top2);                             // s4-7, m4-7
  return _mm_unpacklo_epi32(low6, high);                                           // s0-3 s4-7 m0-3 m4-7
}

// shuffle_epi8 masks that broadcast 16-bit lane g (0..7) of a 128-bit half to all eight lanes.
TESSERA_AVX2 inline __m256i lane16_broadcast_mask(int g) {
  return _mm256_set1_epi16(static_cast<int16_t>((2 * g) | ((2 * g + 1) << 8)));
}

template <int NW, int R>
TESSERA_AVX2 void dot_q4_k(int64_t nb, const uint8_t* const* w, const ActRows& act, float* out) {
  __m256 acc[NW][R];
  __m128 acc_m[NW][R];
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) {
      acc[i][r] = _mm256_setzero_ps();
      acc_m[i][r] = _mm_setzero_ps();
    }
  }
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256i broadcast[8];
  for (int g = 0; g < 8; ++g) broadcast[g] = lane16_broadcast_mask(g);
  for (int64_t b = 0; b < nb; ++b) {
    // Per activation row: the sums of each group of 32 activations (pairs of the 16-value sums).
    __m128i group_sums[R];
    for (int r = 0; r < R; ++r) {
      const __m256i bsums = load256(act.data + r * act.stride + b * kQ8KBytes + 260);
      group_sums[r] = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
    }
    for (int i = 0; i < NW; ++i) {
      const uint8_t* wb = w[i] + b * 144;
      prefetch(wb, 144);
      const float d = h2f(wb), dmin = h2f(wb + 2);
      const __m256i sm16 = _mm256_cvtepu8_epi16(k4_scales_and_mins(wb + 4));  // 8 scales, then 8 mins
      const __m256i scales16 = _mm256_permute2x128_si256(sm16, sm16, 0x00);  // both halves: the 8 scales
      const __m128i mins16 = _mm256_extracti128_si256(sm16, 1);
      __m256i q[8];
      for (int c = 0; c < 4; ++c) {
        const __m256i bits = load256(wb + 16 + 32 * c);
        q[2 * c] = _mm256_and_si256(bits, low4);
        q[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
      }
      for (int r = 0; r < R; ++r) {
        const uint8_t* ab = act.data + r * act.stride + b * kQ8KBytes;
        const float da = act.scales[r * nb + b];
        __m256i sumi = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
          const __m256i prod = _mm256_maddubs_epi16(q[g], load256(ab + 4 + 32 * g));
          sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_shuffle_epi8(scales16, broadcast[g]), prod));
        }
        acc[i][r] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(sumi), acc[i][r]);
        // Minimum terms: sum over groups of min_g * (sum of the group's 32 activations).
        const __m128i prod = _mm_madd_epi16(mins16, group_sums[r]);
        acc_m[i][r] = _mm_fmadd_ps(_mm_set1_ps(-dmin * da), _mm_cvtepi32_ps(prod), acc_m[i][r]);
      }
    }
  }
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) out[i * R + r] = hsum(acc[i][r]) + hsum(acc_m[i][r]);
  }
}

// Q4_K decode: four weight rows against one activation row. The same arithmetic as dot_q4_k, arranged
// so that everything a block needs stays in registers: the nibbles are split as each group is used,
// the minimum terms join the one accumulator per row (in its low four lanes), and d, dmin convert
// together. With dot_q4_k's layout the compiler kept the eight accumulators on the stack.
TESSERA_AVX2 inline __m256 q4_k_block(const uint8_t* wb, const uint8_t* ab, __m128i group_sums, float da,
                                      __m256 acc) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m128 dd = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_as<uint32_t>(wb)))),
                               _mm_set1_ps(da));  // d * da, dmin * da
  const __m256i sm16 = _mm256_cvtepu8_epi16(k4_scales_and_mins(wb + 4));  // 8 scales, then 8 mins
  const __m256i scales16 = _mm256_permute2x128_si256(sm16, sm16, 0x00);  // both halves: the 8 scales
  __m256i sumi = _mm256_setzero_si256();
  for (int c = 0; c < 4; ++c) {
    const __m256i bits = load256(wb + 16 + 32 * c);
    const __m256i lo = _mm256_and_si256(bits, low4), hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
    const __m256i p_lo = _mm256_maddubs_epi16(lo, load256(ab + 4 + 64 * c));
    const __m256i p_hi = _mm256_maddubs_epi16(hi, load256(ab + 36 + 64 * c));
    sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_shuffle_epi8(scales16, lane16_broadcast_mask(2 * c)), p_lo));
    sumi = _mm256_add_epi32(sumi,
                            _mm256_madd_epi16(_mm256_shuffle_epi8(scales16, lane16_broadcast_mask(2 * c + 1)), p_hi));
  }
  acc = _mm256_fmadd_ps(_mm256_broadcastss_ps(dd), _mm256_cvtepi32_ps(sumi), acc);
  // Minimum terms: - dmin * da * sum over groups of min_g * (sum of the group's 32 activations).
  const __m128 mins = _mm_cvtepi32_ps(_mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), group_sums));
  return _mm256_fnmadd_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(dd)), _mm256_zextps128_ps256(mins), acc);
}

template <int NW>
TESSERA_AVX2 void dot_q4_k_decode(int64_t nb, const uint8_t* const* w, const ActRows& act, float* out) {
  __m256 acc[NW];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* ab = act.data + b * kQ8KBytes;
    const __m256i bsums = load256(ab + 260);
    const __m128i group_sums = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
    const float da = act.scales[b];
    for (int i = 0; i < NW; ++i) {
      const uint8_t* wb = w[i] + b * 144;
      prefetch(wb, 144);
      acc[i] = q4_k_block(wb, ab, group_sums, da, acc[i]);
    }
  }
  for (int i = 0; i < NW; ++i) out[i] = hsum(acc[i]);
}

// ---- Q6_K (210-byte blocks: 128 bytes ql, 64 bytes qh, 16 int8 scales, f16 d) -------------------------
// Values stay unsigned (0..63) for maddubs; the -32 offset is applied through the activation group
// sums.
template <int NW, int R>
TESSERA_AVX2 void dot_q6_k(int64_t nb, const uint8_t* const* w, const ActRows& act, float* out) {
  __m256 acc[NW][R];
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) acc[i][r] = _mm256_setzero_ps();
  }
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(3);
  for (int64_t b = 0; b < nb; ++b) {
    for (int i = 0; i < NW; ++i) {
      const uint8_t* wb = w[i] + b * 210;
      prefetch(wb, 210);
      const int8_t* scales = reinterpret_cast<const int8_t*>(wb + 192);
      const float d = h2f(wb + 208);
      __m256i q[8];  // 8 vectors of 32 values, in value order
      for (int half = 0; half < 2; ++half) {
        const __m256i l0 = load256(wb + 64 * half), l1 = load256(wb + 64 * half + 32);
        const __m256i h = load256(wb + 128 + 32 * half);
        const auto high = [&](int shift) TESSERA_AVX2 {
          return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, shift), two), 4);
        };
        q[4 * half + 0] = _mm256_or_si256(_mm256_and_si256(l0, low4), high(0));
        q[4 * half + 1] = _mm256_or_si256(_mm256_and_si256(l1, low4), high(2));
        q[4 * half + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4), high(4));
        q[4 * half + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4), high(6));
      }
      // Vector v covers groups 2v (its first 16 values) and 2v+1 (the last 16).
      __m256i scale[8];
      for (int v = 0; v < 8; ++v) {
        scale[v] = _mm256_set_m128i(_mm_set1_epi16(scales[2 * v + 1]), _mm_set1_epi16(scales[2 * v]));
      }
      const __m128i scales_lo = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)));
      const __m128i scales_hi = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8)));
      for (int r = 0; r < R; ++r) {
        const uint8_t* ab = act.data + r * act.stride + b * kQ8KBytes;
        __m256i sumi = _mm256_setzero_si256();
        for (int v = 0; v < 8; ++v) {
          sumi =
              _mm256_add_epi32(sumi, _mm256_madd_epi16(scale[v], _mm256_maddubs_epi16(q[v], load256(ab + 4 + 32 * v))));
        }
        // Subtract 32 * sum_g scale_g * bsum_g.
        const __m128i bs_lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ab + 260));
        const __m128i bs_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ab + 276));
        const __m128i corr = _mm_add_epi32(_mm_madd_epi16(scales_lo, bs_lo), _mm_madd_epi16(scales_hi, bs_hi));
        sumi = _mm256_sub_epi32(sumi, _mm256_set_m128i(_mm_setzero_si128(), _mm_slli_epi32(corr, 5)));
        acc[i][r] = _mm256_fmadd_ps(_mm256_set1_ps(d * act.scales[r * nb + b]), _mm256_cvtepi32_ps(sumi), acc[i][r]);
      }
    }
  }
  for (int i = 0; i < NW; ++i) {
    for (int r = 0; r < R; ++r) out[i * R + r] = hsum(acc[i][r]);
  }
}

template <int NW, int R>
struct Q4_0Kernel {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, float* o) {
    if constexpr (NW == kDecodeRows && R == 1) {
      if (a.q4_pairs != nullptr) return dot_q4_0_decode<NW>(nb, w, a, o);
    }
    dot_legacy<NW, R, true>(nb, w, a, o);
  }
};
template <int NW, int R>
struct Q8_0Kernel {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, float* o) {
    dot_legacy<NW, R, false>(nb, w, a, o);
  }
};
template <int NW, int R>
struct Q4_KKernel {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, float* o) {
    if constexpr (NW == kDecodeRows && R == 1) {
      dot_q4_k_decode<NW>(nb, w, a, o);
    } else {
      dot_q4_k<NW, R>(nb, w, a, o);
    }
  }
};
template <int NW, int R>
struct Q6_KKernel {
  static void run(int64_t nb, const uint8_t* const* w, const ActRows& a, float* o) { dot_q6_k<NW, R>(nb, w, a, o); }
};

}  // namespace

DotFn avx2_dot(tessera::quant::GgmlType type) {
  using tessera::quant::GgmlType;
  switch (type) {
    case GgmlType::q4_0:
      return run_rows<Q4_0Kernel>;
    case GgmlType::q8_0:
      return run_rows<Q8_0Kernel>;
    case GgmlType::q4_k:
      return run_rows<Q4_KKernel>;
    case GgmlType::q6_k:
      return run_rows<Q6_KKernel>;
    default:
      return avx2_float_dot(type);  // float weight rows, or nullptr
  }
}

}  // namespace tessera::kernels::quant

#else  // no x86 kernels: no AVX2 kernels

namespace tessera::kernels::quant {
DotFn avx2_dot(tessera::quant::GgmlType) {
  return nullptr;
}
}  // namespace tessera::kernels::quant

#endif
