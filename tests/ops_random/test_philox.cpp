// Philox-4x32-10 against the published known-answer vectors (Random123's kat_vectors), plus the bit
// helpers that turn its words into floats and bounded integers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "tessera/core/philox.h"

using namespace tessera;

namespace {
void expect_block(const PhiloxBlock& got, const PhiloxBlock& want) {
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got[i], want[i]) << "word " << i << ": got 0x" << std::hex << got[i] << ", want 0x" << want[i];
  }
}
}  // namespace

TEST(Philox, KnownAnswerZeroCounterZeroKey) {
  expect_block(philox4x32_10({0, 0, 0, 0}, {0, 0}), {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
}

TEST(Philox, KnownAnswerAllOnes) {
  expect_block(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
               {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
}

TEST(Philox, KnownAnswerPiDigits) {
  expect_block(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
               {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST(Philox, BlockLaysOutSeedAndCounterLowWordFirst) {
  const uint64_t seed = 0x299f31d0a4093822ull, counter = 0x85a308d3243f6a88ull;
  expect_block(philox_block(seed, counter),
               philox4x32_10({0x243f6a88u, 0x85a308d3u, 0, 0}, {0xa4093822u, 0x299f31d0u}));
  expect_block(philox_block(0, 0), {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
}

TEST(Philox, NeighbouringCountersAndKeysDiffer) {
  const PhiloxBlock a = philox_block(7, 100), b = philox_block(7, 101), c = philox_block(8, 100);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, philox_block(7, 100));  // a pure function
}

TEST(Philox, UniformBitHelpers) {
  EXPECT_EQ(uniform24(0), 0.0);
  EXPECT_EQ(uniform24(0xffffffffu), 1.0 - std::ldexp(1.0, -24));
  EXPECT_EQ(uniform24(0x80000000u), 0.5);
  EXPECT_EQ(uniform24(0x000000ffu), 0.0);  // the low 8 bits are dropped
  EXPECT_EQ(static_cast<double>(static_cast<float>(uniform24(0xffffffffu))), uniform24(0xffffffffu));  // exact in f32
  EXPECT_EQ(uniform53(0, 0), 0.0);
  EXPECT_EQ(uniform53(0xffffffffu, 0xffffffffu), 1.0 - std::ldexp(1.0, -53));
  EXPECT_EQ(uniform53(0, 0x80000000u), 0.5);
  EXPECT_EQ(uniform53(0x800u, 0), std::ldexp(1.0, -53));  // the lowest kept bit
  EXPECT_EQ(bits64(0x89abcdefu, 0x01234567u), 0x0123456789abcdefull);
}

TEST(Philox, MulHi64) {
  EXPECT_EQ(mulhi64(0, 12345), 0u);
  EXPECT_EQ(mulhi64(~0ull, ~0ull), ~0ull - 1);  // (2^64-1)^2 = 2^128 - 2^65 + 1
  EXPECT_EQ(mulhi64(1ull << 63, 10), 5u);       // half of the range maps to the middle
  EXPECT_EQ(mulhi64(~0ull, 10), 9u);            // the largest draw maps to the last value
  EXPECT_EQ(mulhi64(0x123456789abcdef0ull, 1ull << 32), 0x12345678u);
  EXPECT_EQ(mulhi64(0xffffffff00000000ull, 0xffffffff00000000ull), 0xfffffffe00000001ull);
}
