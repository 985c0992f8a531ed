#pragma once
// The regular expressions that cut text into words before byte-level BPE merges them, run by PCRE2 in
// UTF mode with Unicode properties (\p{L}, \p{N}, \s follow the Unicode tables of the PCRE2 build).
// As in llama.cpp, text between two matches is a word of its own, and each expression of a chain
// splits every word the previous one produced, seeing only that word (a lookahead stops at its end).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

class Regex;  // one compiled PCRE2 pattern (pretokenizer.cpp)

class PreTokenizerRegex {
 public:
  explicit PreTokenizerRegex(const std::vector<std::string>& patterns);
  ~PreTokenizerRegex();
  PreTokenizerRegex(PreTokenizerRegex&&) noexcept;
  PreTokenizerRegex& operator=(PreTokenizerRegex&&) noexcept;

  // The words of valid UTF-8 `text`, views into it, in order; together they are the whole text.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  std::vector<std::unique_ptr<Regex>> chain_;
};

// The patterns behind a tokenizer.ggml.pre value.
std::vector<std::string> pre_tokenizer_patterns(PreTokenizer pre);

}  // namespace tessera::tokenizers
