#pragma once
// A text tokenizer built from a GGUF file's metadata, encoding and decoding as llama.cpp does:
// SentencePiece-style (tokenizer.ggml.model "llama") or byte-level BPE ("gpt2", with the pre-tokenizer
// named by tokenizer.ggml.pre). Encoding takes valid UTF-8 only; decoding gives bytes (a byte token may
// end inside a character).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

// Whether encode() adds BOS/EOS and matches special tokens written in the text.
struct EncodeOptions {
  bool add_special = true;     // BOS / EOS where the vocabulary asks for them (add_bos_token, add_eos_token)
  bool parse_special = false;  // match control tokens such as <|endoftext|> written in the text
};

// How decode() renders special tokens, BOS/EOS and spaces.
struct DecodeOptions {
  bool render_special = true;   // control and unknown tokens print as their text ("<s>"); else as nothing
  bool strip_bos_eos = false;   // drop a leading BOS and a trailing EOS the vocabulary adds
  // llama.cpp's clean-up of " ." " ," " !" " ?" and " 's"-style contractions, on for byte-level BPE;
  // off gives back exactly the encoded text.
  bool clean_spaces = true;
};

class PreTokenizerRegex;

// Text to token ids and back, for one model's vocabulary.
class Tokenizer {
 public:
  // The tokenizer described by a GGUF file's tokenizer.ggml.* metadata (from an open file, or by path);
  // throws tessera::Error naming the file and the key that is missing or malformed.
  static Tokenizer from_gguf(const io::gguf::Reader& file);
  static Tokenizer from_gguf(const std::string& path);
  explicit Tokenizer(Vocab vocab);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;  // movable, not copyable (it owns the compiled pre-tokenizer)
  Tokenizer& operator=(Tokenizer&&) noexcept;  // movable, not copyable

  const Vocab& vocab() const { return vocab_; }  // the tokens, their scores and types, the special ids
  int64_t size() const { return vocab_.size(); }  // number of tokens (n_vocab)
  TokenId bos() const { return vocab_.bos; }  // beginning-of-sequence id, kNoToken when the vocabulary has none
  TokenId eos() const { return vocab_.eos; }  // end-of-sequence id, kNoToken when the vocabulary has none

  // Token ids of `text` (valid UTF-8; throws tessera::Error naming the offset of an invalid byte).
  std::vector<TokenId> encode(std::string_view text, const EncodeOptions& options = {}) const;
  // The bytes of `ids` (throws tessera::Error on an id outside the vocabulary).
  std::string decode(const std::vector<TokenId>& ids, const DecodeOptions& options = {}) const;
  // One token's bytes, as decode() writes it in the middle of a sequence.
  std::string piece(TokenId id, bool render_special = true) const;

 private:
  void check_id(TokenId id) const;

  Vocab vocab_;
  std::unique_ptr<PreTokenizerRegex> pre_;  // BPE only
};

}  // namespace tessera::tokenizers
