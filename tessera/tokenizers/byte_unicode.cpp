#include "tessera/tokenizers/byte_unicode.h"

#include <array>

#include "tessera/tokenizers/utf8.h"

namespace tessera::tokenizers {

namespace {

bool maps_to_itself(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Alphabet {
  std::array<uint32_t, 256> code_point{};
  std::array<std::string, 256> text;
  Alphabet() {
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      code_point[b] = maps_to_itself(b) ? static_cast<uint32_t>(b) : next++;
      text[b] = utf8_encode(code_point[b]);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

const std::string& byte_to_unicode(unsigned char b) { return alphabet().text[b]; }

std::optional<unsigned char> unicode_to_byte(uint32_t cp) {
  if (cp < 256 && maps_to_itself(static_cast<int>(cp))) return static_cast<unsigned char>(cp);
  if (cp < 256 || cp >= 256 + 68) return std::nullopt;
  // The remapped bytes take 256, 257, ... in byte order.
  for (int b = 0; b < 256; ++b) {
    if (alphabet().code_point[b] == cp) return static_cast<unsigned char>(b);
  }
  return std::nullopt;
}

std::string bytes_to_unicode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += byte_to_unicode(static_cast<unsigned char>(c));
  return out;
}

}  // namespace tessera::tokenizers
