#include "tessera/tokenizers/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tessera/core/error.h"
#include "tessera/tokenizers/utf8.h"

namespace tessera::tokenizers {

class Regex {
 public:
  explicit Regex(const std::string& pattern) : pattern_(pattern) {
    int code = 0;
    PCRE2_SIZE offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &code,
                          &offset, nullptr);
    if (code_ == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(code, message, sizeof(message));
      fail("pre-tokenizer pattern /{}/ does not compile at offset {}: {}", pattern, offset,
           reinterpret_cast<const char*>(message));
    }
    // The JIT is several times faster; without it (an unsupported CPU) the interpreter gives the same words.
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
  }
  ~Regex() { pcre2_code_free(code_); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends the words of `word` to `out`: every match, and every gap between matches.
  void split(std::string_view word, std::vector<std::string_view>& out) const {
    // Match data per call, so that one tokenizer can encode on several threads at once.
    const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
        pcre2_match_data_create_from_pattern(code_, nullptr), &pcre2_match_data_free);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(word.data());
    size_t done = 0;  // end of the last word emitted
    size_t at = 0;    // where the next search starts
    while (at < word.size()) {
      // The text was checked once by the caller: no UTF check per search.
      const int rc = pcre2_match(code_, subject, word.size(), at, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      TESSERA_CHECK(rc >= 0, "pre-tokenizer pattern /{}/: PCRE2 match failed with code {}", pattern_, rc);
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
      const size_t begin = ovector[0], end = ovector[1];
      if (begin > done) out.push_back(word.substr(done, begin - done));
      if (end > begin) {
        out.push_back(word.substr(begin, end - begin));
        done = at = end;
      } else {
        // An empty match splits nothing; step over one character.
        at = begin + utf8_sequence_length(static_cast<unsigned char>(word[begin]));
        done = begin;
      }
    }
    if (done < word.size()) out.push_back(word.substr(done));
  }

 private:
  std::string pattern_;
  pcre2_code* code_ = nullptr;
};

PreTokenizerRegex::PreTokenizerRegex(const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) chain_.push_back(std::make_unique<Regex>(p));
}
PreTokenizerRegex::~PreTokenizerRegex() = default;
PreTokenizerRegex::PreTokenizerRegex(PreTokenizerRegex&&) noexcept = default;
PreTokenizerRegex& PreTokenizerRegex::operator=(PreTokenizerRegex&&) noexcept = default;

std::vector<std::string_view> PreTokenizerRegex::split(std::string_view text) const {
  std::vector<std::string_view> words;
  if (!text.empty()) words.push_back(text);
  for (const auto& regex : chain_) {
    std::vector<std::string_view> next;
    next.reserve(words.size() * 2);
    for (const auto w : words) regex->split(w, next);
    words = std::move(next);
  }
  return words;
}

std::vector<std::string> pre_tokenizer_patterns(PreTokenizer pre) {
  switch (pre) {
    case PreTokenizer::gpt2:
      return {R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))"};
    case PreTokenizer::llama3:
      // Llama 3's pattern with its case-insensitive contractions spelled out: (?i) in UTF mode would
      // also take U+017F for s and the Kelvin sign for k.
      return {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
    case PreTokenizer::none:
      break;
  }
  return {};
}

}  // namespace tessera::tokenizers
