#pragma once
// Internal to tessera/kernels/quant, x86 builds only: what the AVX2 and AVX-512 VNNI x8 kernels share,
// so that both read the layout the same way: the software prefetch of a group's stream, and the Q4_K
// x8 group block's 6-bit scale and min tables (interleave_x8.h) expanded into bytes, with the byte
// shuffles that pick one group's values out of them.
#include <immintrin.h>

#include <cstdint>

#define TESSERA_X8_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace tessera::kernels::quant::x8 {

// Asks for the weight bytes this far ahead of those in use (a group's stream is contiguous). 4 KiB
// measured a few percent above 1 KiB and 256 B ten below; 2-16 KiB are alike within the noise.
inline constexpr int64_t kPrefetchBytes = 4096;

inline void prefetch_lines(const uint8_t* p, int lines) {
  for (int i = 0; i < lines; ++i) _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + 64 * i), _MM_HINT_T0);
}

// Expands a 48-byte 6-bit table (interleave_x8.cpp, pack_six_bit) into bytes: first = groups 0-3,
// second = groups 4-7, each with rows 0-3 in the low lane and rows 4-7 in the high lane; group q of the
// four at byte 4q + (r mod 4) of its lane.
TESSERA_X8_AVX2 inline void expand_six_bit(const uint8_t* p, __m256i* first, __m256i* second) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(3);
  const __m256i nibbles = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i top = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32)));
  const __m256i top_first = _mm256_and_si256(_mm256_srlv_epi32(top, _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2)), two);
  const __m256i top_second = _mm256_and_si256(_mm256_srlv_epi32(top, _mm256_setr_epi32(4, 4, 4, 4, 6, 6, 6, 6)), two);
  *first = _mm256_or_si256(_mm256_and_si256(nibbles, low4), _mm256_slli_epi16(top_first, 4));
  *second = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(nibbles, 4), low4), _mm256_slli_epi16(top_second, 4));
}

// In-lane byte shuffles over an expanded table: kScaleMask[q] puts row r's value of group q (of the
// four in the table) in both 16-bit halves of 32-bit lane r; kScaleLowMask[q] in the low half only
// (the high half zero, for vpdpwssd against a 32-bit sum); kMinPairMask[p] puts groups 2p and 2p+1 in
// the two halves. Each 16-byte lane pattern repeats, so the masks also serve 512-bit tables whose
// 256-bit halves are alike.
alignas(32) constexpr int8_t kScaleMask[4][32] = {
    {0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1, 0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1},
    {4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1, 4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1},
    {8, -1, 8, -1, 9, -1, 9, -1, 10, -1, 10, -1, 11, -1, 11, -1,
     8, -1, 8, -1, 9, -1, 9, -1, 10, -1, 10, -1, 11, -1, 11, -1},
    {12, -1, 12, -1, 13, -1, 13, -1, 14, -1, 14, -1, 15, -1, 15, -1,
     12, -1, 12, -1, 13, -1, 13, -1, 14, -1, 14, -1, 15, -1, 15, -1},
};
alignas(16) constexpr int8_t kScaleLowMask[4][16] = {
    {0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1, -1, -1},
    {4, -1, -1, -1, 5, -1, -1, -1, 6, -1, -1, -1, 7, -1, -1, -1},
    {8, -1, -1, -1, 9, -1, -1, -1, 10, -1, -1, -1, 11, -1, -1, -1},
    {12, -1, -1, -1, 13, -1, -1, -1, 14, -1, -1, -1, 15, -1, -1, -1},
};
alignas(32) constexpr int8_t kMinPairMask[2][32] = {
    {0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1, 0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1},
    {8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1,
     8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1},
};

TESSERA_X8_AVX2 inline __m256i mask256(const int8_t* m) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
}

// Row r's sum over the block of min[g] * (sum of the 32 activation codes of group g), in lane r: the
// part of a Q4_K dot product that dmin scales. group_sums: four int32, each the int16 sums of groups
// 2t and 2t+1 (quant_matmul.cpp, q8_k_group_sums).
TESSERA_X8_AVX2 inline __m256i min_sums(const __m256i mins[2], const int32_t* group_sums) {
  __m256i sum = _mm256_setzero_si256();
  for (int t = 0; t < 4; ++t) {
    const __m256i pair = _mm256_shuffle_epi8(mins[t / 2], mask256(kMinPairMask[t % 2]));
    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pair, _mm256_set1_epi32(group_sums[t])));
  }
  return sum;
}

}  // namespace tessera::kernels::quant::x8
