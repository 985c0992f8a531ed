// f16 and bf16 conversions against an independent oracle: every finite 16-bit pattern is decoded with
// ldexp from the format's definition, and f32 -> 16-bit rounding is checked by searching that sorted
// table for the nearest value (ties to the even pattern), so no bit tricks are shared with the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tessera/core/half.h"

using namespace tessera;

namespace {

struct Format {
  int mantissa_bits;  // f16: 10, bf16: 7
  int exponent_bits;  // f16: 5, bf16: 8
};
constexpr Format kF16{10, 5};
constexpr Format kBF16{7, 8};

// The value of a 16-bit pattern straight from the IEEE definition.
double decode(Format f, uint16_t bits) {
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  const bool negative = bits & 0x8000u;
  const int exp = (bits >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mant = bits & ((1 << f.mantissa_bits) - 1);
  double v;
  if (exp == (1 << f.exponent_bits) - 1) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, 1 - bias - f.mantissa_bits);
  } else {
    v = std::ldexp(mant + (1 << f.mantissa_bits), exp - bias - f.mantissa_bits);
  }
  return negative ? -v : v;
}

// Non-negative patterns in increasing order 0x0000 .. +inf (the patterns of a format are ordered like
// their values, which the test below also confirms).
struct Table {
  std::vector<double> values;
  std::vector<uint16_t> bits;
};
Table positive_table(Format f) {
  Table t;
  const uint16_t inf = static_cast<uint16_t>(((1u << f.exponent_bits) - 1) << f.mantissa_bits);
  for (uint32_t b = 0; b <= inf; ++b) {
    t.values.push_back(decode(f, static_cast<uint16_t>(b)));
    t.bits.push_back(static_cast<uint16_t>(b));
  }
  return t;
}

// Nearest pattern to x, ties to the even pattern; the largest finite value's upper neighbour is
// infinity (its pattern is even), so overflow rounds as IEEE specifies.
uint16_t oracle_round(const Table& t, float x) {
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  const double a = std::abs(static_cast<double>(x));
  auto it = std::lower_bound(t.values.begin(), t.values.end(), a);
  if (it == t.values.end()) return sign | t.bits.back();  // beyond infinity's stand-in: inf
  const size_t hi = static_cast<size_t>(it - t.values.begin());
  if (*it == a || hi == 0) return sign | t.bits[hi];
  const size_t lo = hi - 1;
  // The last table entry is infinity; as a rounding neighbour it stands for 2^(emax+1).
  const double hi_value = std::isinf(t.values[hi]) ? 2 * t.values[lo] - t.values[lo - 1] : t.values[hi];
  const double dl = a - t.values[lo], dh = hi_value - a;
  if (dl < dh) return sign | t.bits[lo];
  if (dh < dl) return sign | t.bits[hi];
  return sign | ((t.bits[lo] & 1u) ? t.bits[hi] : t.bits[lo]);
}

float f32_from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}
uint32_t bits_of(float v) {
  return std::bit_cast<uint32_t>(v);
}

}  // namespace

TEST(Half, OracleTableIsMonotonic) {
  for (Format f : {kF16, kBF16}) {
    const Table t = positive_table(f);
    for (size_t i = 1; i < t.values.size(); ++i) ASSERT_LT(t.values[i - 1], t.values[i]) << i;
  }
}

TEST(Half, F16DecodeEveryPattern) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const double want = decode(kF16, static_cast<uint16_t>(b));
    const float got = f16_bits_to_f32(static_cast<uint16_t>(b));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
      ASSERT_EQ(std::signbit(got), (b & 0x8000u) != 0) << std::hex << b;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << std::hex << b;
      ASSERT_EQ(std::signbit(got), (b & 0x8000u) != 0) << std::hex << b;
    }
  }
}

TEST(Half, BF16DecodeEveryPattern) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const double want = decode(kBF16, static_cast<uint16_t>(b));
    const float got = bf16_bits_to_f32(static_cast<uint16_t>(b));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << std::hex << b;
      ASSERT_EQ(std::signbit(got), (b & 0x8000u) != 0) << std::hex << b;
    }
  }
}

TEST(Half, RoundTripOfEveryPattern) {
  // 16 -> 32 -> 16 is the identity for every non-NaN pattern; NaNs stay NaN with their sign.
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const bool f16_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
    const uint16_t back16 = f32_to_f16_bits(f16_bits_to_f32(h));
    if (f16_nan) {
      ASSERT_EQ(back16 & 0x7c00u, 0x7c00u) << std::hex << b;
      ASSERT_NE(back16 & 0x3ffu, 0u) << std::hex << b;
      ASSERT_EQ(back16 & 0x8000u, h & 0x8000u) << std::hex << b;
    } else {
      ASSERT_EQ(back16, h) << std::hex << b;
    }
    const bool bf16_nan = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
    const uint16_t back_bf = f32_to_bf16_bits(bf16_bits_to_f32(h));
    if (bf16_nan) {
      ASSERT_EQ(back_bf & 0x7f80u, 0x7f80u) << std::hex << b;
      ASSERT_NE(back_bf & 0x7fu, 0u) << std::hex << b;
      ASSERT_EQ(back_bf & 0x8000u, h & 0x8000u) << std::hex << b;
    } else {
      ASSERT_EQ(back_bf, h) << std::hex << b;
    }
  }
}

TEST(Half, RoundingAtEveryMidpointAndItsNeighbours) {
  // For each pair of adjacent values (including subnormals and max -> inf), the exact midpoint ties to
  // even and the floats one ulp either side of it round down and up.
  for (Format f : {kF16, kBF16}) {
    const Table t = positive_table(f);
    auto convert = [&](float x) { return f.mantissa_bits == 10 ? f32_to_f16_bits(x) : f32_to_bf16_bits(x); };
    for (size_t i = 0; i + 1 < t.values.size(); ++i) {
      const double hi_value = std::isinf(t.values[i + 1]) ? 2 * t.values[i] - t.values[i - 1] : t.values[i + 1];
      const auto mid = static_cast<float>((t.values[i] + hi_value) / 2);  // exact in f32
      ASSERT_EQ(static_cast<double>(mid), (t.values[i] + hi_value) / 2);
      const uint16_t even = (t.bits[i] & 1u) ? t.bits[i + 1] : t.bits[i];
      for (float sign : {1.0f, -1.0f}) {
        const uint16_t s = sign < 0 ? 0x8000u : 0u;
        ASSERT_EQ(convert(sign * mid), s | even) << "midpoint after " << std::hex << t.bits[i];
        ASSERT_EQ(convert(sign * std::nextafter(mid, 0.0f)), s | t.bits[i]) << std::hex << t.bits[i];
        ASSERT_EQ(convert(sign * std::nextafter(mid, INFINITY)), s | t.bits[i + 1]) << std::hex << t.bits[i];
      }
    }
  }
}

TEST(Half, RoundingMatchesOracleOnAStrideThroughAllFloats) {
  // About 16.7 million f32 patterns spread over the whole space (a stride prime to every power of two).
  const Table f16 = positive_table(kF16), bf16 = positive_table(kBF16);
  for (uint64_t b = 0; b < (1ull << 32); b += 257) {
    const float x = f32_from_bits(static_cast<uint32_t>(b));
    if (std::isnan(x)) continue;
    ASSERT_EQ(f32_to_f16_bits(x), oracle_round(f16, x)) << std::hex << b;
    ASSERT_EQ(f32_to_bf16_bits(x), oracle_round(bf16, x)) << std::hex << b;
  }
}

TEST(Half, SpecialValues) {
  // Max finite, overflow, infinities, negative zero, smallest subnormal and normal.
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bffu);
  EXPECT_EQ(f16_bits_to_f32(0x7bffu), 65504.0f);
  EXPECT_EQ(f32_to_f16_bits(65519.99f), 0x7bffu);  // below the midpoint to 65536
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00u);   // the midpoint ties to even: infinity
  EXPECT_EQ(f32_to_f16_bits(1e10f), 0x7c00u);
  EXPECT_EQ(f32_to_f16_bits(-1e10f), 0xfc00u);
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::max()), 0x7c00u);
  EXPECT_EQ(f32_to_f16_bits(INFINITY), 0x7c00u);
  EXPECT_EQ(f32_to_f16_bits(-INFINITY), 0xfc00u);
  EXPECT_EQ(f32_to_f16_bits(0.0f), 0x0000u);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000u);
  EXPECT_TRUE(std::signbit(f16_bits_to_f32(0x8000u)));
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000u);  // half of it ties to even zero
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001u);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(3.0f, -26)), 0x0001u);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -14)), 0x0400u);     // smallest normal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1023.5f, -24)), 0x0400u);  // subnormal rounding carries into normal
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(f32_to_f16_bits(-std::numeric_limits<float>::denorm_min()), 0x8000u);  // keeps the sign
  EXPECT_EQ(f16_bits_to_f32(0x0001u), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_bits_to_f32(0x03ffu), std::ldexp(1023.0f, -24));
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3c00u);
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00u);      // tie, even is down
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02u);  // tie, even is up

  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80u);
  EXPECT_EQ(f32_to_bf16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(f32_to_bf16_bits(INFINITY), 0x7f80u);
  EXPECT_EQ(f32_to_bf16_bits(-INFINITY), 0xff80u);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80u);  // rounds past max: inf
  EXPECT_EQ(bf16_bits_to_f32(0x7f7fu), f32_from_bits(0x7f7f0000u));         // max finite
  EXPECT_EQ(f32_to_bf16_bits(f32_from_bits(0x7f7f7fffu)), 0x7f7fu);         // just below the midpoint
  EXPECT_EQ(f32_to_bf16_bits(f32_from_bits(0x7f7f8000u)), 0x7f80u);         // midpoint to even: inf
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(f32_to_bf16_bits(f32_from_bits(0x00018000u)), 0x0002u);  // subnormal tie to even (up)
  EXPECT_EQ(f32_to_bf16_bits(f32_from_bits(0x00008000u)), 0x0000u);  // subnormal tie to even (down)
  EXPECT_EQ(f32_to_bf16_bits(f32_from_bits(0x3f808000u)), 0x3f80u);  // tie, even is down
  EXPECT_EQ(f32_to_bf16_bits(f32_from_bits(0x3f818000u)), 0x3f82u);  // tie, even is up
}

TEST(Half, NanStaysNan) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  // Signalling-looking NaNs whose payload lives only in the low bits must not collapse to infinity.
  for (uint32_t payload : {0x400000u, 0x000001u, 0x001fffu, 0x7fffffu, 0x00ffffu}) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float nan = f32_from_bits(sign | 0x7f800000u | payload);
      ASSERT_TRUE(std::isnan(nan));
      const uint16_t h = f32_to_f16_bits(nan);
      EXPECT_EQ(h & 0x7c00u, 0x7c00u) << std::hex << payload;
      EXPECT_NE(h & 0x3ffu, 0u) << std::hex << payload;
      EXPECT_EQ(h & 0x8000u, sign >> 16);
      EXPECT_TRUE(std::isnan(f16_bits_to_f32(h)));
      const uint16_t b = f32_to_bf16_bits(nan);
      EXPECT_EQ(b & 0x7f80u, 0x7f80u) << std::hex << payload;
      EXPECT_NE(b & 0x7fu, 0u) << std::hex << payload;
      EXPECT_EQ(b & 0x8000u, sign >> 16);
      EXPECT_TRUE(std::isnan(bf16_bits_to_f32(b)));
    }
  }
  EXPECT_TRUE(std::isnan(static_cast<float>(f16_t(qnan))));
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16_t(qnan))));
}

TEST(Half, StorageTypesConvertImplicitly) {
  const f16_t h = 0.1f;
  EXPECT_EQ(h.bits, 0x2e66u);  // 0.0999755859375
  EXPECT_EQ(static_cast<float>(h), 0.0999755859375f);
  const bf16_t b = 0.1f;
  EXPECT_EQ(b.bits, 0x3dcdu);  // 0.10009765625
  EXPECT_EQ(static_cast<float>(b), 0.10009765625f);
  EXPECT_EQ(f16_t::from_bits(0x4248).bits, 0x4248u);
  EXPECT_EQ(static_cast<float>(f16_t::from_bits(0x4248)), 3.140625f);
  EXPECT_EQ(static_cast<float>(bf16_t::from_bits(0x4049)), 3.140625f);
  EXPECT_EQ(bits_of(static_cast<float>(f16_t())), 0u);  // default is +0
}
