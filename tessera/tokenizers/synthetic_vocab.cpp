#include "tessera/tokenizers/synthetic_vocab.h"

#include <fmt/format.h>

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/tokenizers/byte_unicode.h"

namespace tessera::tokenizers {

namespace {

using io::gguf::Value;
using io::gguf::ValueType;

constexpr const char* kSpace = "\xE2\x96\x81";  // "▁", SentencePiece's word-start marker
constexpr const char* kLetters = "abcdefghijklmnopqrstuvwxyz";

// Adds `text` as the next token unless present; false once the vocabulary is full.
struct Filler {
  Vocab& v;
  int64_t limit;
  std::unordered_set<std::string> seen;
  bool full() const { return v.size() >= limit; }
  bool add(const std::string& text, TokenType type, float score = 0.0f) {
    if (full()) return false;
    if (!seen.insert(text).second) return true;
    v.tokens.push_back(text);
    v.types.push_back(type);
    v.scores.push_back(score);
    return true;
  }
};

Vocab spm_vocab(int64_t n_vocab) {
  Vocab v;
  v.model = Model::spm;
  Filler f{v, n_vocab, {}};
  f.add("<unk>", TokenType::unknown);
  f.add("<s>", TokenType::control);
  f.add("</s>", TokenType::control);
  for (int b = 0; b < 256; ++b) f.add(fmt::format("<0x{:02X}>", b), TokenType::byte);
  // Pieces score by rank: SentencePiece merges the higher-scored (earlier) piece first.
  const auto piece = [&](const std::string& text) { return f.add(text, TokenType::normal, -static_cast<float>(v.size())); };
  piece(kSpace);
  for (char c = 33; c < 127; ++c) {
    piece(std::string(kSpace) + c);
    piece(std::string(1, c));
  }
  for (const char* a = kLetters; *a && !f.full(); ++a) {
    for (const char* b = kLetters; *b; ++b) {
      piece(std::string(kSpace) + *a + *b);
      piece(std::string{*a, *b});
    }
  }
  for (const char* a = kLetters; *a && !f.full(); ++a) {
    for (const char* b = kLetters; *b && !f.full(); ++b) {
      for (const char* c = kLetters; *c; ++c) {
        piece(std::string(kSpace) + *a + *b + *c);
        piece(std::string{*a, *b, *c});
      }
    }
  }
  for (int64_t i = 0; !f.full(); ++i) f.add(fmt::format("<extra_{}>", i), TokenType::unused, -1e9f);
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}

Vocab bpe_vocab(int64_t n_vocab) {
  Vocab v;
  v.model = Model::bpe;
  v.pre = PreTokenizer::gpt2;
  v.pre_name = "gpt-2";
  Filler f{v, n_vocab - 1, {}};  // the last id is <|endoftext|>
  for (int b = 0; b < 256; ++b) f.add(byte_to_unicode(static_cast<unsigned char>(b)), TokenType::normal);
  std::vector<std::string> merges;
  const auto merge = [&](const std::string& left, const std::string& right) {
    if (f.full()) return;
    const size_t before = v.tokens.size();
    f.add(left + right, TokenType::normal);
    if (v.tokens.size() > before) merges.push_back(left + " " + right);
  };
  const std::string space = byte_to_unicode(' ');  // "Ġ"
  for (const char* a = kLetters; *a; ++a) merge(space, std::string(1, *a));
  for (const char* a = kLetters; *a; ++a) {
    for (const char* b = kLetters; *b; ++b) {
      merge(std::string(1, *a), std::string(1, *b));
      merge(space + *a, std::string(1, *b));
    }
  }
  for (const char* a = kLetters; *a && !f.full(); ++a) {
    for (const char* b = kLetters; *b && !f.full(); ++b) {
      for (const char* c = kLetters; *c; ++c) {
        merge(std::string{*a, *b}, std::string(1, *c));
        merge(space + *a + *b, std::string(1, *c));
      }
    }
  }
  // Past every lowercase triple: longer pieces from triples and pairs, still valid merges.
  for (size_t i = 256; !f.full() && i < v.tokens.size(); ++i) {
    for (size_t j = 256; j < 256 + 26 * 27 && !f.full(); ++j) merge(v.tokens[i], v.tokens[j]);
  }
  v.tokens.push_back("<|endoftext|>");
  v.types.push_back(TokenType::control);
  v.scores.clear();
  for (size_t i = 0; i < merges.size(); ++i) {
    const size_t at = merges[i].find(' ');
    v.merge_ranks.emplace(merge_key(std::string_view(merges[i]).substr(0, at), std::string_view(merges[i]).substr(at + 1)),
                          static_cast<int32_t>(i));
  }
  v.bos = v.eos = static_cast<TokenId>(v.tokens.size() - 1);
  v.clean_spaces = true;
  return v;
}

// The merge list in rank order, as GGUF spells it ("left right").
std::vector<std::string> merges_in_order(const Vocab& v) {
  std::vector<std::string> out(v.merge_ranks.size());
  for (const auto& [key, rank] : v.merge_ranks) {
    std::string text = key;
    text[key.find('\n')] = ' ';
    out[static_cast<size_t>(rank)] = std::move(text);
  }
  return out;
}

}  // namespace

Vocab synthetic_vocab(Model model, int64_t n_vocab) {
  const int64_t least = model == Model::spm ? 260 : 257;
  if (n_vocab < least || n_vocab > (int64_t{1} << 31) - 1) {
    fail("a synthetic {} vocabulary needs {} to 2147483647 tokens (got {}): the byte tokens and the special ones "
         "come first",
         model == Model::spm ? "SentencePiece" : "byte-level BPE", least, n_vocab);
  }
  Vocab v = model == Model::spm ? spm_vocab(n_vocab) : bpe_vocab(n_vocab);
  v.index();
  return v;
}

void write_vocab(io::gguf::Writer& w, const Vocab& v) {
  w.set("tokenizer.ggml.model", Value::string(v.model == Model::spm ? "llama" : "gpt2"));
  if (v.model == Model::bpe) w.set("tokenizer.ggml.pre", Value::string(v.pre_name.empty() ? "default" : v.pre_name));
  w.set("tokenizer.ggml.tokens", Value::string_array(v.tokens));
  if (!v.scores.empty()) w.set("tokenizer.ggml.scores", Value::f32_array(v.scores));
  std::vector<int64_t> types;
  for (const TokenType t : v.types) types.push_back(static_cast<int64_t>(t));
  w.set("tokenizer.ggml.token_type", Value::signed_array(ValueType::i32, std::move(types)));
  if (!v.merge_ranks.empty()) w.set("tokenizer.ggml.merges", Value::string_array(merges_in_order(v)));
  const auto id = [&](const char* key, TokenId t) {
    if (t != kNoToken) w.set(key, Value::u32(static_cast<uint64_t>(t)));
  };
  id("tokenizer.ggml.bos_token_id", v.bos);
  id("tokenizer.ggml.eos_token_id", v.eos);
  id("tokenizer.ggml.unknown_token_id", v.unk);
  w.set("tokenizer.ggml.add_bos_token", Value::boolean(v.add_bos));
  w.set("tokenizer.ggml.add_eos_token", Value::boolean(v.add_eos));
  if (v.model == Model::spm) w.set("tokenizer.ggml.add_space_prefix", Value::boolean(v.add_space_prefix));
}

}  // namespace tessera::tokenizers
