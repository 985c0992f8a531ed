// Activation quantization for the quantized matmul. Q8_0 and Q8_1 follow llama.cpp's CPU backend
// (not ggml's reference encoder): d = amax / 127 stored as f16, codes = round-half-to-even(x * 127 /
// amax). Matching it lets Tessera reproduce llama.cpp's matmul results closely; it is also fast (no
// libm rounding calls). The AVX2 and portable paths give identical bytes. Q8_K uses ggml's reference
// encoder, which llama.cpp's CPU backend also uses.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/core/half.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/quant/dot.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quantize.h"

#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels::quant {

namespace {

using tessera::quant::kQK;

// Round half to even for |v| < 2^22 (adding 1.5 * 2^23 leaves the rounded integer in the mantissa).
int round_even(float v) {
  const float shifted = v + 12582912.f;
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof(bits));
  return (bits & 0x007fffff) - 0x00400000;
}

// One block of 32: scale d (f16 bits), codes q, and the code sum.
void block_portable(const float* x, uint16_t* d_bits, int8_t* q, int* sum) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.f;
  const float id = amax != 0.0f ? 127.f / amax : 0.0f;
  *d_bits = f32_to_f16_bits(d);
  int s = 0;
  for (int j = 0; j < kQK; ++j) {
    q[j] = static_cast<int8_t>(std::clamp(round_even(x[j] * id), -128, 127));
    s += q[j];
  }
  *sum = s;
}

#if TESSERA_X86_KERNELS
// The largest of the eight lanes.
__attribute__((target("avx2,fma,f16c"))) inline float horizontal_max(__m256 m) {
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  return _mm_cvtss_f32(m4);
}

// 32 x i32 (four vectors, in order) -> 32 x i8 with saturation, in order: packs works per 128-bit
// lane, and the permute restores the order.
__attribute__((target("avx2,fma,f16c"))) inline __m256i pack_codes(const __m256i n[4]) {
  const __m256i p8 = _mm256_packs_epi16(_mm256_packs_epi32(n[0], n[1]), _mm256_packs_epi32(n[2], n[3]));
  return _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

__attribute__((target("avx2,fma,f16c"))) void block_avx2(const float* x, uint16_t* d_bits, int8_t* q, int* sum) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 v[4];
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
  }
  const float amax = horizontal_max(m);
  *d_bits = f32_to_f16_bits(amax / 127.f);
  const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.f / amax : 0.0f);
  __m256i n[4];
  for (int i = 0; i < 4; ++i) {
    n[i] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  // Code sum, then the codes as bytes.
  const __m256i s8 = _mm256_add_epi32(_mm256_add_epi32(n[0], n[1]), _mm256_add_epi32(n[2], n[3]));
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
  *sum = _mm_cvtsi128_si32(s4);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), pack_codes(n));
}

// One Q8_K block (256 values), the same bytes as quant::detail::quantize_q8_k (llama.cpp's reference,
// which its CPU backend also uses for activations): the first value of largest magnitude sets
// iscale = -127 / max, codes are round-half-even(iscale * x) capped at 127, bsums are sums of 16 codes,
// d = 1 / iscale. Returns false for a block with a NaN or infinity, which the caller hands to the
// reference (its integer conversion of NaN differs from the vector one).
__attribute__((target("avx2,fma,f16c"))) bool q8_k_block_avx2(const float* x, uint8_t* out) {
  constexpr int kN = tessera::quant::kQKK;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
  for (int i = 0; i < kN; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v));
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  const float amax = horizontal_max(m);
  if (_mm256_movemask_ps(nan) != 0 || !std::isfinite(amax)) return false;
  tessera::quant::BlockQ8_K b{};
  if (amax != 0.0f) {
    int first = 0;  // the first index of largest magnitude
    const __m256 target = _mm256_set1_ps(amax);
    for (int i = 0; i < kN; i += 8) {
      const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)), target, _CMP_EQ_OQ));
      if (hits != 0) {
        first = i + __builtin_ctz(static_cast<unsigned>(hits));
        break;
      }
    }
    const float iscale = -127.f / x[first];
    const __m256 scale = _mm256_set1_ps(iscale);
    const __m256i cap = _mm256_set1_epi32(127);
    for (int i = 0; i < kN; i += 32) {
      __m256i n[4];
      for (int u = 0; u < 4; ++u) {
        const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * u), scale);
        n[u] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_round_ps(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)), cap);
      }
      const __m256i codes = pack_codes(n);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b.qs + i), codes);
      // Sums of 16 signed codes: sad against zero sums 8 unsigned bytes, so bias the codes by 128.
      const __m256i sad = _mm256_sad_epu8(_mm256_xor_si256(codes, _mm256_set1_epi8(static_cast<char>(0x80))),
                                          _mm256_setzero_si256());
      b.bsums[i / 16] = static_cast<int16_t>(_mm256_extract_epi64(sad, 0) + _mm256_extract_epi64(sad, 1) - 16 * 128);
      b.bsums[i / 16 + 1] =
          static_cast<int16_t>(_mm256_extract_epi64(sad, 2) + _mm256_extract_epi64(sad, 3) - 16 * 128);
    }
    b.d = 1 / iscale;
  }
  std::memcpy(out, &b, sizeof b);
  return true;
}
#endif

}  // namespace

void quantize_activation_row(GgmlType act_type, const float* x, void* y, int64_t k) {
  quantize_activations_with_scales(act_type, x, static_cast<uint8_t*>(y), k, nullptr, nullptr);
}

void quantize_activations_with_scales(GgmlType act_type, const float* x, uint8_t* out, int64_t k, float* scales,
                                      float* sums) {
  switch (act_type) {
    case GgmlType::q8_0:
    case GgmlType::q8_1: {
      const bool with_sum = act_type == GgmlType::q8_1;
      const int64_t block_bytes = with_sum ? 36 : 34;
#if TESSERA_X86_KERNELS
      const bool avx2 = use_avx2();
#endif
      for (int64_t b = 0; b < k / kQK; ++b) {
        uint16_t d;
        int8_t q[kQK];
        int sum;
#if TESSERA_X86_KERNELS
        if (avx2) {
          block_avx2(x + b * kQK, &d, q, &sum);
        } else {
          block_portable(x + b * kQK, &d, q, &sum);
        }
#else
        block_portable(x + b * kQK, &d, q, &sum);
#endif
        uint8_t* blk = out + b * block_bytes;
        std::memcpy(blk, &d, 2);
        if (with_sum) {
          const uint16_t s = f32_to_f16_bits(f16_bits_to_f32(d) * static_cast<float>(sum));
          std::memcpy(blk + 2, &s, 2);
        }
        std::memcpy(blk + (with_sum ? 4 : 2), q, kQK);
        if (scales != nullptr) {
          scales[b] = f16_bits_to_f32(d);
          sums[b] = scales[b] * static_cast<float>(sum);
        }
      }
      return;
    }
    case GgmlType::q8_k: {
      constexpr int64_t kN = tessera::quant::kQKK;
      constexpr auto kBytes = static_cast<int64_t>(sizeof(tessera::quant::BlockQ8_K));
      for (int64_t b = 0; b < k / kN; ++b) {
        uint8_t* blk = out + b * kBytes;
#if TESSERA_X86_KERNELS
        const bool done = use_avx2() && q8_k_block_avx2(x + b * kN, blk);
#else
        const bool done = false;
#endif
        if (!done) tessera::quant::detail::quantize_q8_k(x + b * kN, blk, kN);
        if (scales != nullptr) std::memcpy(&scales[b], blk, sizeof(float));
      }
      return;
    }
    default:
      std::memcpy(out, x, static_cast<size_t>(k) * sizeof(float));
      return;  // f32 activations
  }
}

void layout_q4_0_pairs(const uint8_t* q8_0_row, int64_t nb, uint8_t* pairs) {
  constexpr int64_t kBlock = 34;  // f16 scale, 32 int8 codes
  for (int64_t b = 0; b < nb / 4 * 4; b += 2) {
    const auto* first = reinterpret_cast<const int8_t*>(q8_0_row + b * kBlock + 2);
    const auto* second = reinterpret_cast<const int8_t*>(q8_0_row + (b + 1) * kBlock + 2);
    uint8_t* out = pairs + b / 2 * kQ4PairBytes;
    std::memcpy(out, first, 16);
    std::memcpy(out + 16, second, 16);
    std::memcpy(out + 32, first + 16, 16);
    std::memcpy(out + 48, second + 16, 16);
    int16_t offsets[16];
    for (int j = 0; j < 8; ++j) {
      offsets[j] = static_cast<int16_t>(8 * (first[2 * j] + first[2 * j + 1] + first[16 + 2 * j] + first[17 + 2 * j]));
      offsets[8 + j] =
          static_cast<int16_t>(8 * (second[2 * j] + second[2 * j + 1] + second[16 + 2 * j] + second[17 + 2 * j]));
    }
    std::memcpy(out + 64, offsets, sizeof offsets);
  }
}

}  // namespace tessera::kernels::quant
