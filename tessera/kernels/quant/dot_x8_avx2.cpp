// AVX2 dot products of x8 groups of weights (eight interleaved rows, interleave_x8.h): one group with
// R activation rows (prefill), or G groups from distant stripes with one row (decode: G memory
// streams). A 32-byte vector of codes holds four bytes of each of the eight rows; one broadcast of
// four activation codes meets all of them through _mm256_maddubs_epi16, and the eight rows' results
// stay in the eight 32-bit lanes to the end (no horizontal sums, no per-row scale shuffles). 16-bit
// partial sums cannot overflow: at most 8 products of 15 * 128 pairs per lane, 30720.
#include "tessera/kernels/quant/dot.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "tessera/quant/blocks.h"

#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>

#include "tessera/kernels/quant/dot_x8_shared.h"

#define TESSERA_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace tessera::kernels::quant {

namespace {

constexpr int64_t kQ8_0Bytes = sizeof(tessera::quant::BlockQ8_0), kQ8_KBytes = sizeof(tessera::quant::BlockQ8_K);

TESSERA_AVX2 inline __m256i load256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Four activation codes (bytes) repeated in every 32-bit lane.
TESSERA_AVX2 inline __m256i broadcast4(const uint8_t* p) {
  return _mm256_set1_epi32(load_as<int32_t>(p));
}

// G x R float accumulators, one lane per weight row of a group; stored group by group, row by row.
template <int R, int G>
struct Accumulators {
  __m256 v[G][R];
  TESSERA_AVX2 Accumulators() {
    for (auto& group : v) {
      for (__m256& a : group) a = _mm256_setzero_ps();
    }
  }
  TESSERA_AVX2 void store(float* out) const {
    for (int gi = 0; gi < G; ++gi) {
      for (int r = 0; r < R; ++r) _mm256_storeu_ps(out + 8 * (gi * R + r), v[gi][r]);
    }
  }
};

// ---- Q4_0 x8: 144-byte group blocks (8 f16 scales, 4 chunks of 32 code bytes) ----------------------
// Values are unsigned (0..15) for maddubs; the -8 offset comes off through the activation sums:
// d_w * (d_a * sum(q * a) - 8 * d_a * sum(a)).
template <int R, int G>
TESSERA_AVX2 void dot_q4_0_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t*, float* out) {
  Accumulators<R, G> acc;
  const __m256i low4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    for (int gi = 0; gi < G; ++gi) {
      const uint8_t* wb = w[gi] + b * 144;
      x8::prefetch_lines(wb, 3);  // a block spans 2.25 lines
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
          s = _mm256_add_epi16(s, _mm256_maddubs_epi16(lo[c], broadcast4(codes + 4 * c)));
          s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi[c], broadcast4(codes + 16 + 4 * c)));
        }
        const __m256 dots = _mm256_cvtepi32_ps(_mm256_madd_epi16(s, ones));
        const int64_t at = r * nb + b;
        const __m256 v = _mm256_fmsub_ps(_mm256_set1_ps(act.scales[at]), dots, _mm256_set1_ps(8.0f * act.sums[at]));
        acc.v[gi][r] = _mm256_fmadd_ps(dw, v, acc.v[gi][r]);
      }
    }
  }
  acc.store(out);
}

// ---- Q8_0 x8: 272-byte group blocks (8 f16 scales, 8 chunks of 32 code bytes) ----------------------
// Signed times signed: maddubs takes |w| and the activations with w's sign. A pair sum can reach
// 2 * 127 * 128, so each is widened to 32 bits at once.
template <int R, int G>
TESSERA_AVX2 void dot_q8_0_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t*, float* out) {
  Accumulators<R, G> acc;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    for (int gi = 0; gi < G; ++gi) {
      // No software prefetch: with it, decode measured 59-66% of the triad, without it 88-90% (the
      // Q4 kernels, with more arithmetic per byte, gain from theirs).
      const uint8_t* wb = w[gi] + b * 272;
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb)));
      __m256i s[R];
      for (__m256i& v : s) v = _mm256_setzero_si256();
      for (int c = 0; c < 8; ++c) {
        const __m256i codes_w = load256(wb + 16 + 32 * c);
        const __m256i magnitude = _mm256_sign_epi8(codes_w, codes_w);
        for (int r = 0; r < R; ++r) {
          const __m256i a = broadcast4(act.data + r * act.stride + b * kQ8_0Bytes + 2 + 4 * c);
          const __m256i pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(a, codes_w));
          s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(pairs, ones));
        }
      }
      for (int r = 0; r < R; ++r) {
        const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(act.scales[r * nb + b]));
        acc.v[gi][r] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s[r]), acc.v[gi][r]);
      }
    }
  }
  acc.store(out);
}

// ---- Q4_K x8: 1152-byte group blocks ----------------------------------------------------------------
// The 6-bit tables are expanded and picked from as in dot_x8_shared.h.
// group_sums: per activation row and block, 4 int32, each two int16 sums of 32 codes (groups 2t, 2t+1).
template <int R, int G>
TESSERA_AVX2 void dot_q4_k_x8(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t* group_sums,
                              float* out) {
  Accumulators<R, G> acc;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    for (int gi = 0; gi < G; ++gi) {
      const uint8_t* wb = w[gi] + b * 1152;
      x8::prefetch_lines(wb, 2);
      __m256i scales[2], mins[2];
      x8::expand_six_bit(wb + 32, &scales[0], &scales[1]);
      x8::expand_six_bit(wb + 80, &mins[0], &mins[1]);
      const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb)));
      const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 16)));
      for (int r = 0; r < R; ++r) {
        const uint8_t* codes = act.data + r * act.stride + b * kQ8_KBytes + 4;
        __m256i sumi = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
          const uint8_t* wg = wb + 128 + 128 * g;
          if (r == 0) x8::prefetch_lines(wg, 2);
          __m256i s = _mm256_setzero_si256();
          for (int c = 0; c < 4; ++c) {
            const __m256i bits = load256(wg + 32 * c);
            const __m256i lo = _mm256_and_si256(bits, low4), hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(lo, broadcast4(codes + 32 * g + 8 * c)));
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi, broadcast4(codes + 32 * g + 8 * c + 4)));
          }
          const __m256i scale = _mm256_shuffle_epi8(scales[g / 4], x8::mask256(x8::kScaleMask[g % 4]));
          sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(s, scale));
        }
        const __m256i min_sum = x8::min_sums(mins, group_sums + (r * nb + b) * 4);
        const __m256 da = _mm256_set1_ps(act.scales[r * nb + b]);
        acc.v[gi][r] = _mm256_fmadd_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(sumi), acc.v[gi][r]);
        acc.v[gi][r] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, da), _mm256_cvtepi32_ps(min_sum), acc.v[gi][r]);
      }
    }
  }
  acc.store(out);
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

DotX8Fn avx2_dot_x8(tessera::quant::GgmlType type, int rows, int groups) {
  using tessera::quant::GgmlType;
  if (type == GgmlType::q4_0) return pick_x8<Q4_0X8>(rows, groups);
  if (type == GgmlType::q8_0) return pick_x8<Q8_0X8>(rows, groups);
  if (type == GgmlType::q4_k) return pick_x8<Q4_KX8>(rows, groups);
  return nullptr;
}

}  // namespace tessera::kernels::quant

#else  // no x86 kernels: no AVX2 kernels

namespace tessera::kernels::quant {
DotX8Fn avx2_dot_x8(tessera::quant::GgmlType, int, int) {
  return nullptr;
}
}  // namespace tessera::kernels::quant

#endif
