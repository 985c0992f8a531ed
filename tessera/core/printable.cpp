#include "tessera/core/printable.h"

#include <fmt/format.h>

namespace tessera {

namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] and its code point; 0 when ill-formed.
size_t utf8_sequence(std::string_view s, size_t i, char32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  size_t len = 0;
  char32_t cp = 0, min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2, cp = lead & 0x1F, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3, cp = lead & 0x0F, min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return len;
}

// Code points that move the cursor, reorder text or end lines without looking like it.
bool is_invisible_control(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) ||                        // C1 controls (CSI is U+009B)
         cp == 0x061C || cp == 0x200E || cp == 0x200F ||      // bidirectional marks
         (cp >= 0x2028 && cp <= 0x202E) ||                    // line/paragraph separators, embeddings
         (cp >= 0x2066 && cp <= 0x2069);                      // bidirectional isolates
}

std::string escape(std::string_view s, size_t max_chars, bool in_quotes) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::string piece;
    size_t consumed = 1;
    char32_t cp = 0;
    if (c == '\n') {
      piece = "\\n";
    } else if (c == '\t') {
      piece = "\\t";
    } else if (c == '\r') {
      piece = "\\r";
    } else if (in_quotes && (c == '"' || c == '\\')) {
      piece = {'\\', static_cast<char>(c)};
    } else if (c < 0x20 || c == 0x7F) {
      piece = fmt::format("\\x{:02x}", c);
    } else if (c < 0x80) {
      piece = std::string(1, static_cast<char>(c));
    } else if (const size_t len = utf8_sequence(s, i, &cp); len == 0) {
      piece = fmt::format("\\x{:02x}", c);  // not UTF-8: show the byte
    } else {
      consumed = len;
      piece = is_invisible_control(cp) ? fmt::format("\\u{:04x}", static_cast<uint32_t>(cp))
                                       : std::string(s.substr(i, len));
    }
    // One visible character per code point (escapes count their length).
    const size_t width = piece.size() > 1 && piece[0] == '\\' ? piece.size() : 1;
    if (shown + width > max_chars) {
      out += "...";
      break;
    }
    out += piece;
    shown += width;
    i += consumed;
  }
  return out;
}

}  // namespace

std::string printable(std::string_view s, size_t max_chars) {
  return escape(s, max_chars, false);
}

std::string printable_quoted(std::string_view s, size_t max_chars) {
  return "\"" + escape(s, max_chars, true) + "\"";
}

}  // namespace tessera
