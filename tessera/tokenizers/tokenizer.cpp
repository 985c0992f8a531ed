#include "tessera/tokenizers/tokenizer.h"

#include "tessera/core/error.h"
#include "tessera/tokenizers/bpe.h"
#include "tessera/tokenizers/byte_unicode.h"
#include "tessera/tokenizers/clean_spaces.h"
#include "tessera/tokenizers/gguf_vocab.h"
#include "tessera/tokenizers/pretokenizer.h"
#include "tessera/tokenizers/special_split.h"
#include "tessera/tokenizers/spm.h"
#include "tessera/tokenizers/utf8.h"

namespace tessera::tokenizers {

namespace {


std::string spm_escape_spaces(std::string_view text, bool leading_space) {
  std::string out;
  out.reserve(text.size() + 3);
  if (leading_space) out += kSpmSpace;
  for (char c : text) {
    if (c == ' ') {
      out += kSpmSpace;
    } else {
      out += c;
    }
  }
  return out;
}

std::string spm_unescape_spaces(const std::string& text) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    if (text.compare(at, kSpmSpace.size(), kSpmSpace) == 0) {
      out += ' ';
      at += kSpmSpace.size();
    } else {
      out += text[at++];
    }
  }
  return out;
}

// Byte-level symbols back to bytes; a code point outside the alphabet is kept as its UTF-8.
std::string bpe_symbols_to_bytes(const std::string& text) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    const size_t start = at;
    const uint32_t cp = utf8_decode_one(text, at);
    if (const auto b = unicode_to_byte(cp)) {
      out += static_cast<char>(*b);
    } else {
      out.append(text, start, at - start);
    }
  }
  return out;
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const io::gguf::Reader& file) { return Tokenizer(vocab_from_gguf(file)); }

Tokenizer Tokenizer::from_gguf(const std::string& path) { return from_gguf(io::gguf::Reader::open(path)); }

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  if (vocab_.model == Model::bpe) pre_ = std::make_unique<PreTokenizerRegex>(pre_tokenizer_patterns(vocab_.pre));
}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<TokenId> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  check_utf8(text, "tokenize");
  std::vector<TokenId> out;
  const bool bos = options.add_special && vocab_.add_bos;
  if (bos) out.push_back(vocab_.bos);
  // SPM puts a space before the first text and before text that follows a special token.
  bool after_special = true;
  for (const Fragment& f : split_specials(vocab_, text, options.parse_special)) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    if (vocab_.model == Model::spm) {
      spm_encode(vocab_, spm_escape_spaces(f.text, vocab_.add_space_prefix && after_special), out);
    } else {
      for (const std::string_view word : pre_->split(f.text)) bpe_encode_word(vocab_, bytes_to_unicode(word), out);
    }
    after_special = false;
  }
  if (options.add_special && vocab_.add_eos) out.push_back(vocab_.eos);
  return out;
}

void Tokenizer::check_id(TokenId id) const {
  TESSERA_CHECK(id >= 0 && id < vocab_.size(), "token id {} is out of range: the vocabulary has {} tokens (ids 0..{})",
                id, vocab_.size(), vocab_.size() - 1);
}

std::string Tokenizer::piece(TokenId id, bool render_special) const {
  check_id(id);
  const std::string& text = vocab_.tokens[static_cast<size_t>(id)];
  switch (vocab_.type(id)) {
    case TokenType::control:
    case TokenType::unknown:
      return render_special ? text : std::string();
    case TokenType::user_defined:
      return text;
    case TokenType::normal:
      return vocab_.model == Model::spm ? spm_unescape_spaces(text) : bpe_symbols_to_bytes(text);
    case TokenType::byte:
      if (vocab_.model == Model::spm) {
        // <0xXX>
        TESSERA_CHECK(text.size() == 6 && text.compare(0, 3, "<0x") == 0 && text[5] == '>',
                      "token {} has type BYTE but its text {} is not of the form <0xXX>", id, text);
        return std::string(1, static_cast<char>(std::stoi(text.substr(3, 2), nullptr, 16)));
      }
      return std::string();
    case TokenType::undefined:
    case TokenType::unused:
      break;
  }
  return std::string();  // as llama.cpp: unused and undefined tokens print as nothing
}

std::string Tokenizer::decode(const std::vector<TokenId>& ids, const DecodeOptions& options) const {
  size_t begin = 0, end = ids.size();
  bool strip_space = vocab_.add_space_prefix;  // the space encode() put before the text
  if (options.strip_bos_eos && vocab_.add_bos && end > begin && ids[begin] == vocab_.bos) {
    ++begin;
    strip_space = false;  // as llama.cpp: after a removed BOS the space stays
  }
  if (options.strip_bos_eos && vocab_.add_eos && end > begin && ids[end - 1] == vocab_.eos) --end;
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    std::string p = piece(ids[i], options.render_special);
    if (strip_space && !p.empty() && p.front() == ' ') p.erase(0, 1);
    strip_space = false;
    out += p;
  }
  if (options.clean_spaces && vocab_.clean_spaces) out = clean_up_spaces(out);
  return out;
}

}  // namespace tessera::tokenizers
