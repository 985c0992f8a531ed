#pragma once
// Strict parsing of integers that come from files (checkpoint metadata, ...): the whole text must be a
// decimal number inside the given bounds. No spaces, no '+', a '-' only where the bounds allow negative
// values, no trailing characters: "1xyz", " 5", "+5" and "-0" for a count are all refused, unlike
// std::stoll, which reads "1xyz" as 1 and " -1000000" as -1000000.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// The value of `text` when it is a decimal integer in [min, max]; nullopt otherwise.
std::optional<int64_t> parse_int_strict(std::string_view text, int64_t min, int64_t max);
std::optional<uint64_t> parse_uint_strict(std::string_view text, uint64_t max);

// As above, failing with "<what> is '<text>', expected an integer in [min, max]" (a tessera::Error).
int64_t parse_int_or_fail(std::string_view text, int64_t min, int64_t max, const std::string& what);
uint64_t parse_uint_or_fail(std::string_view text, uint64_t max, const std::string& what);

}  // namespace tessera
