#pragma once
// Untrusted text (metadata keys, tensor names, header excerpts) made safe to print on a terminal or in
// an error message: control characters, terminal escape sequences, C1 controls, bidirectional overrides
// and invalid UTF-8 become visible escapes (\n, \x1b, \u202e), and long text is cut with "...". Valid
// printable UTF-8 passes through unchanged.
#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// At most `max_chars` output characters of escaped text, then "..." when `s` did not fit.
std::string printable(std::string_view s, size_t max_chars = 200);
// printable() in double quotes, with '"' and '\' escaped too: "a \"b\"\n". (Not named `quoted`:
// argument-dependent lookup would pick std::quoted for a std::string.)
std::string printable_quoted(std::string_view s, size_t max_chars = 200);

}  // namespace tessera
