// Strict integer parsing for values read from files: the whole text, no sign where the bounds exclude
// negatives, range-checked.
#include <gtest/gtest.h>

#include "tessera/core/parse_int.h"
#include "test_util.h"

using namespace tessera;

TEST(ParseInt, AcceptsOnlyWholeDecimalsInRange) {
  EXPECT_EQ(parse_int_strict("0", 0, 10), 0);
  EXPECT_EQ(parse_int_strict("10", 0, 10), 10);
  EXPECT_EQ(parse_int_strict("-5", -10, 10), -5);
  EXPECT_EQ(parse_int_strict("9223372036854775807", 0, INT64_MAX), INT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "1xyz", "+1", "0x10", "1e3", "1.0", "-1000000", "-0", "11", "abc", "\n"}) {
    EXPECT_FALSE(parse_int_strict(bad, 0, 10).has_value()) << "'" << bad << "'";
  }
  EXPECT_FALSE(parse_int_strict("-11", -10, 10).has_value());
  EXPECT_FALSE(parse_int_strict("9223372036854775808", 0, INT64_MAX).has_value());  // overflows
  EXPECT_EQ(parse_uint_strict("18446744073709551615", UINT64_MAX), UINT64_MAX);
  for (const char* bad : {"-1", "+1", "18446744073709551616", " 7", "7 "}) {
    EXPECT_FALSE(parse_uint_strict(bad, UINT64_MAX).has_value()) << "'" << bad << "'";
  }
}

TEST(ParseInt, FailuresNameWhatAndTheBounds) {
  EXPECT_TESSERA_ERROR(parse_int_or_fail("-1000000", 0, 100000, "checkpoint c.st: metadata 'epoch'"),
                       "checkpoint c.st: metadata 'epoch' is '-1000000', expected an integer in [0, 100000]");
  EXPECT_TESSERA_ERROR(parse_uint_or_fail("1xyz", 99, "seed"), "seed is '1xyz'", "[0, 99]");
  // Long or binary text is cut and made printable in the message.
  EXPECT_TESSERA_ERROR(parse_int_or_fail(std::string(100, '7') + "\x01", 0, 1, "x"), "x is '7777", "...'");
  EXPECT_EQ(parse_int_or_fail("42", 0, 100, "x"), 42);
}
