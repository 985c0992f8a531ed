#include "tessera/tokenizers/utf8.h"

#include "tessera/core/error.h"

namespace tessera::tokenizers {

size_t utf8_sequence_length(unsigned char first) {
  if (first < 0x80) return 1;
  if ((first & 0xE0) == 0xC0) return 2;
  if ((first & 0xF0) == 0xE0) return 3;
  if ((first & 0xF8) == 0xF0) return 4;
  return 1;
}

std::string utf8_encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    TESSERA_CHECK(cp <= 0x10FFFF, "utf8_encode: code point U+{:X} is past U+10FFFF", cp);
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

uint32_t utf8_decode_one(std::string_view text, size_t& at) {
  const auto first = static_cast<unsigned char>(text[at]);
  const size_t n = std::min(utf8_sequence_length(first), text.size() - at);
  static constexpr unsigned char kLeadMask[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  uint32_t cp = first & kLeadMask[n];
  for (size_t i = 1; i < n; ++i) cp = (cp << 6) | (static_cast<unsigned char>(text[at + i]) & 0x3F);
  at += n;
  return cp;
}

void check_utf8(std::string_view text, std::string_view what) {
  size_t at = 0;
  while (at < text.size()) {
    const auto first = static_cast<unsigned char>(text[at]);
    const size_t n = utf8_sequence_length(first);
    const bool bad_lead = n == 1 && first >= 0x80;
    bool ok = !bad_lead && at + n <= text.size();
    for (size_t i = 1; ok && i < n; ++i) ok = (static_cast<unsigned char>(text[at + i]) & 0xC0) == 0x80;
    if (ok && n > 1) {
      size_t probe = at;
      const uint32_t cp = utf8_decode_one(text, probe);
      static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMinForLength[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    TESSERA_CHECK(ok, "{}: invalid UTF-8 at byte offset {} (byte 0x{:02X}): expected a well-formed UTF-8 text", what,
                  at, first);
    at += n;
  }
}

}  // namespace tessera::tokenizers
