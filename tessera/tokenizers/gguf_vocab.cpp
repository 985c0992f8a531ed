#include "tessera/tokenizers/gguf_vocab.h"

#include "tessera/core/error.h"
#include "tessera/core/printable.h"

namespace tessera::tokenizers {

namespace {

using io::gguf::Reader;

// tokenizer.ggml.pre values and the pattern each names, as llama.cpp spells them.
PreTokenizer pre_tokenizer_named(const std::string& name, const std::string& source) {
  if (name == "gpt-2") return PreTokenizer::gpt2;
  if (name == "llama3" || name == "llama-v3" || name == "llama-bpe") return PreTokenizer::llama3;
  fail("{}: unsupported tokenizer.ggml.pre {}: expected one of 'gpt-2', 'llama-bpe', 'llama3', 'llama-v3'", source,
       printable_quoted(name, 64));
}

Model model_named(const std::string& name, const std::string& source) {
  if (name == "llama") return Model::spm;
  if (name == "gpt2") return Model::bpe;
  fail("{}: unsupported tokenizer.ggml.model {}: expected 'llama' (SentencePiece) or 'gpt2' (byte-level BPE)",
       source, printable_quoted(name, 64));
}

void read_merges(const Reader& file, Vocab& v) {
  const std::string key = "tokenizer.ggml.merges";
  TESSERA_CHECK(file.find(key) != nullptr, "{}: a 'gpt2' tokenizer needs '{}', which is missing", file.source(), key);
  const auto& merges = file.get(key).as_strings(file.source() + ": " + key);
  v.merge_ranks.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    // Split at the first space after the first character, so that a left half may itself be a space.
    const size_t at = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    TESSERA_CHECK(at != std::string::npos, "{}: {}[{}] is {}: expected two symbols separated by a space",
                  file.source(), key, i, printable_quoted(m, 64));
    v.merge_ranks.emplace(merge_key(std::string_view(m).substr(0, at), std::string_view(m).substr(at + 1)),
                          static_cast<int32_t>(i));
  }
}

TokenId read_id(const Reader& file, const std::string& key, TokenId fallback, int64_t n_tokens) {
  const auto* value = file.find(key);
  if (value == nullptr) return fallback;
  const int64_t id = value->as_i64(file.source() + ": " + key);
  TESSERA_CHECK(id >= 0 && id < n_tokens, "{}: {} = {} is not a token id: the vocabulary has {} tokens", file.source(),
                key, id, n_tokens);
  return static_cast<TokenId>(id);
}

bool read_flag(const Reader& file, const std::string& key, bool fallback) {
  const auto* value = file.find(key);
  return value == nullptr ? fallback : value->as_bool(file.source() + ": " + key);
}

}  // namespace

Vocab vocab_from_gguf(const Reader& file) {
  const std::string& src = file.source();
  const std::string model_key = "tokenizer.ggml.model";
  TESSERA_CHECK(file.find(model_key) != nullptr, "{}: no tokenizer in this file: metadata key '{}' is missing", src,
                model_key);
  Vocab v;
  v.model = model_named(file.get(model_key).as_string(src + ": " + model_key), src);

  const std::string tokens_key = "tokenizer.ggml.tokens";
  TESSERA_CHECK(file.find(tokens_key) != nullptr, "{}: no tokenizer in this file: metadata key '{}' is missing", src,
                tokens_key);
  v.tokens = file.get(tokens_key).as_strings(src + ": " + tokens_key);
  TESSERA_CHECK(!v.tokens.empty(), "{}: {} is empty", src, tokens_key);
  const size_t n = v.tokens.size();

  if (const auto* scores = file.find("tokenizer.ggml.scores")) {
    const auto values = scores->as_f64s(src + ": tokenizer.ggml.scores");
    TESSERA_CHECK(values.size() == n, "{}: tokenizer.ggml.scores has {} entries for {} tokens", src, values.size(), n);
    v.scores.assign(values.begin(), values.end());
  }
  v.types.assign(n, TokenType::normal);
  if (const auto* types = file.find("tokenizer.ggml.token_type")) {
    const auto values = types->as_i64s(src + ": tokenizer.ggml.token_type");
    TESSERA_CHECK(values.size() == n, "{}: tokenizer.ggml.token_type has {} entries for {} tokens", src, values.size(),
                  n);
    for (size_t i = 0; i < n; ++i) {
      TESSERA_CHECK(values[i] >= 0 && values[i] <= 6, "{}: tokenizer.ggml.token_type[{}] = {}: expected 0..6", src, i,
                    values[i]);
      v.types[i] = static_cast<TokenType>(values[i]);
    }
  }

  const auto count = static_cast<int64_t>(n);
  if (v.model == Model::spm) {
    v.bos = 1, v.eos = 2, v.unk = 0;
    if (count <= 2) v.bos = v.eos = v.unk = kNoToken;
    v.add_bos = true;
    v.add_space_prefix = true;
  } else {
    read_merges(file, v);
    const std::string pre_key = "tokenizer.ggml.pre";
    TESSERA_CHECK(file.find(pre_key) != nullptr,
                  "{}: a 'gpt2' tokenizer needs '{}' (the pre-tokenizer), which is missing", src, pre_key);
    v.pre_name = file.get(pre_key).as_string(src + ": " + pre_key);
    v.pre = pre_tokenizer_named(v.pre_name, src);
    v.clean_spaces = true;
    if (v.pre == PreTokenizer::llama3) {
      v.ignore_merges = true;
      v.add_bos = true;
    }
  }
  v.bos = read_id(file, "tokenizer.ggml.bos_token_id", v.bos, count);
  v.eos = read_id(file, "tokenizer.ggml.eos_token_id", v.eos, count);
  v.unk = read_id(file, "tokenizer.ggml.unknown_token_id", v.unk, count);
  v.add_bos = read_flag(file, "tokenizer.ggml.add_bos_token", v.add_bos);
  v.add_eos = read_flag(file, "tokenizer.ggml.add_eos_token", v.add_eos);
  v.add_space_prefix = read_flag(file, "tokenizer.ggml.add_space_prefix", v.add_space_prefix);
  TESSERA_CHECK(!v.add_bos || v.bos != kNoToken, "{}: add_bos_token is set but the file has no BOS token", src);
  TESSERA_CHECK(!v.add_eos || v.eos != kNoToken, "{}: add_eos_token is set but the file has no EOS token", src);
  v.index();
  return v;
}

}  // namespace tessera::tokenizers
