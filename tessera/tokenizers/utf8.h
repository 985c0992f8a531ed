#pragma once
// The few UTF-8 facts the tokenizers need: the length of a sequence from its first byte, the encoding
// of one code point, and a strict check of a whole text (tokenizers split text into characters by
// their first bytes, so a malformed text would be split wrongly rather than rejected).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::tokenizers {

// 1..4 from the first byte of a sequence; 1 for a continuation or invalid byte.
size_t utf8_sequence_length(unsigned char first);
// The UTF-8 bytes of `cp` (at most U+10FFFF).
std::string utf8_encode(uint32_t cp);
// The code points of valid UTF-8 text, one at a time: `at` advances past the one returned.
uint32_t utf8_decode_one(std::string_view text, size_t& at);
// Throws tessera::Error naming `what` and the byte offset of the first malformed sequence (truncated,
// overlong, a surrogate, past U+10FFFF or a stray continuation byte).
void check_utf8(std::string_view text, std::string_view what);

}  // namespace tessera::tokenizers
