#pragma once
// A 5x7 bitmap font for chart labels: digits, lowercase letters (upper case maps to them) and a few
// punctuation marks. Each glyph is 7 rows; bit 4 of a row is the leftmost pixel.
#include <array>
#include <cstdint>

namespace tessera::viz {

// Returns the glyph for c, or nullptr for characters the font lacks (drawn as blanks).
const std::array<uint8_t, 7>* glyph5x7(char c);

}  // namespace tessera::viz
