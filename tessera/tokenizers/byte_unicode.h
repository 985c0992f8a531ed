#pragma once
// GPT-2's byte-level alphabet: every byte maps to one printable code point, so that a byte-level BPE
// vocabulary is a list of ordinary strings ("Ġ" is the space byte). Bytes that are printable Latin-1
// map to themselves; the other 68 take U+0100 upwards in byte order.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::tokenizers {

// The UTF-8 text of byte `b`'s code point.
const std::string& byte_to_unicode(unsigned char b);
// The byte that code point `cp` stands for; nullopt for a code point outside the alphabet.
std::optional<unsigned char> unicode_to_byte(uint32_t cp);
// Every byte of `bytes` mapped to its code point.
std::string bytes_to_unicode(std::string_view bytes);

}  // namespace tessera::tokenizers
