#pragma once
// Splits text at the special tokens it contains, before any tokenizer sees it: each occurrence of a
// special token's text becomes that token, the text between stays text. User-defined tokens are
// always matched; control and unknown tokens (<s>, <|endoftext|>) only when `parse_special` is set,
// so by default a user's "<s>" is tokenized as the characters it is made of (llama.cpp does the same).
#include <string_view>
#include <vector>

#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

struct Fragment {
  TokenId token = kNoToken;  // a special token, or kNoToken for text
  std::string_view text;     // into the input, when token == kNoToken
};

std::vector<Fragment> split_specials(const Vocab& vocab, std::string_view text, bool parse_special);

}  // namespace tessera::tokenizers
