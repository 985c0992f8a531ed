#pragma once
// Small hand-made tokenizer GGUFs for the behaviour and bad-input tests: parsed from memory, so that
// each test states the exact vocabulary it relies on.
#include <string>
#include <vector>

#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/tokenizers/byte_unicode.h"

namespace tessera::test {

using io::gguf::Value;

// <unk>, <s>, </s>, the 256 byte tokens, then `pieces` (normal, score -index).
inline io::gguf::Writer tiny_spm_writer(const std::vector<std::string>& pieces) {
  std::vector<std::string> tokens{"<unk>", "<s>", "</s>"};
  std::vector<int64_t> types{2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    types.push_back(6);
  }
  for (const auto& p : pieces) {
    tokens.push_back(p);
    types.push_back(1);
  }
  std::vector<float> scores;
  for (size_t i = 0; i < tokens.size(); ++i) scores.push_back(i < 259 ? 0.0f : -static_cast<float>(i));
  io::gguf::Writer w;
  w.set("tokenizer.ggml.model", Value::string("llama"));
  w.set("tokenizer.ggml.tokens", Value::string_array(tokens));
  w.set("tokenizer.ggml.scores", Value::f32_array(scores));
  w.set("tokenizer.ggml.token_type", Value::signed_array(io::gguf::ValueType::i32, types));
  return w;
}

inline io::gguf::Reader read_back(const io::gguf::Writer& w, const std::string& name = "tiny.gguf") {
  const std::string bytes = w.serialize();
  return io::gguf::Reader::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
}

// A byte-level BPE vocabulary: the 256 byte symbols in byte order, then one token per merge, then
// <|endoftext|> (control).
inline io::gguf::Writer tiny_bpe_writer(const std::vector<std::pair<std::string, std::string>>& merges,
                                        const std::string& pre = "gpt-2") {
  std::vector<std::string> tokens;
  std::vector<int64_t> types;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(tokenizers::byte_to_unicode(static_cast<unsigned char>(b)));
    types.push_back(1);
  }
  std::vector<std::string> merge_text;
  for (const auto& [l, r] : merges) {
    tokens.push_back(l + r);
    types.push_back(1);
    merge_text.push_back(l + " " + r);
  }
  tokens.push_back("<|endoftext|>");
  types.push_back(3);
  io::gguf::Writer w;
  w.set("tokenizer.ggml.model", Value::string("gpt2"));
  w.set("tokenizer.ggml.pre", Value::string(pre));
  w.set("tokenizer.ggml.tokens", Value::string_array(tokens));
  w.set("tokenizer.ggml.token_type", Value::signed_array(io::gguf::ValueType::i32, types));
  w.set("tokenizer.ggml.merges", Value::string_array(merge_text));
  w.set("tokenizer.ggml.bos_token_id", Value::u32(tokens.size() - 1));
  w.set("tokenizer.ggml.eos_token_id", Value::u32(tokens.size() - 1));
  return w;
}

}  // namespace tessera::test
