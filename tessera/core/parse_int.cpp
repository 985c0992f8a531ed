// Strict integer parsing (see parse_int.h), on std::from_chars: it takes no spaces and no '+', and
// reports out-of-range values instead of saturating.
#include "tessera/core/parse_int.h"

#include <charconv>

#include "tessera/core/error.h"

namespace tessera {

namespace {

template <class T>
std::optional<T> parse_whole(std::string_view text) {
  if (text.empty()) return std::nullopt;
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Short enough to quote in an error message, without control characters.
std::string quoted(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > 40 ? out + "..." : out;
}

}  // namespace

std::optional<int64_t> parse_int_strict(std::string_view text, int64_t min, int64_t max) {
  if (min >= 0 && !text.empty() && text[0] == '-') return std::nullopt;  // "-0" is not a count
  const std::optional<int64_t> v = parse_whole<int64_t>(text);
  if (!v || *v < min || *v > max) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_uint_strict(std::string_view text, uint64_t max) {
  const std::optional<uint64_t> v = parse_whole<uint64_t>(text);  // from_chars takes no '-' for unsigned
  if (!v || *v > max) return std::nullopt;
  return v;
}

int64_t parse_int_or_fail(std::string_view text, int64_t min, int64_t max, const std::string& what) {
  const std::optional<int64_t> v = parse_int_strict(text, min, max);
  TESSERA_CHECK(v.has_value(), "{} is '{}', expected an integer in [{}, {}]", what, quoted(text), min, max);
  return *v;
}

uint64_t parse_uint_or_fail(std::string_view text, uint64_t max, const std::string& what) {
  const std::optional<uint64_t> v = parse_uint_strict(text, max);
  TESSERA_CHECK(v.has_value(), "{} is '{}', expected an integer in [0, {}]", what, quoted(text), max);
  return *v;
}

}  // namespace tessera
