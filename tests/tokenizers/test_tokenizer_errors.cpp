// Bad input: files without a tokenizer or with one we do not know, malformed lists, ids out of range
// and text that is not UTF-8. Each is a tessera::Error whose message names what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/tokenizers/tokenizer.h"
#include "tokenizers/tiny_vocab.h"

namespace tessera::tokenizers {
namespace {

using ::testing::HasSubstr;
using test::read_back;
using test::tiny_bpe_writer;
using test::tiny_spm_writer;
using test::Value;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenizerErrors, FileWithoutTokenizerKeys) {
  io::gguf::Writer w;
  w.set("general.architecture", Value::string("llama"));
  const auto file = read_back(w, "weights-only.gguf");
  const std::string msg = error_of([&] { Tokenizer::from_gguf(file); });
  EXPECT_THAT(msg, HasSubstr("weights-only.gguf"));
  EXPECT_THAT(msg, HasSubstr("tokenizer.ggml.model"));
}

TEST(TokenizerErrors, UnknownModelIsNamed) {
  auto w = tiny_spm_writer({});
  w.set("tokenizer.ggml.model", Value::string("wordpiece9"));
  const std::string msg = error_of([&] { Tokenizer::from_gguf(read_back(w)); });
  EXPECT_THAT(msg, HasSubstr("tokenizer.ggml.model"));
  EXPECT_THAT(msg, HasSubstr("wordpiece9"));
}

TEST(TokenizerErrors, UnknownPreTokenizerIsNamed) {
  const std::string msg = error_of([&] { Tokenizer::from_gguf(read_back(tiny_bpe_writer({}, "qwen9"))); });
  EXPECT_THAT(msg, HasSubstr("tokenizer.ggml.pre"));
  EXPECT_THAT(msg, HasSubstr("qwen9"));
  EXPECT_THAT(msg, HasSubstr("llama-bpe"));  // and what is supported
}

TEST(TokenizerErrors, MissingMergesOrPre) {
  auto w = tiny_bpe_writer({});
  w.remove("tokenizer.ggml.merges");
  EXPECT_THAT(error_of([&] { Tokenizer::from_gguf(read_back(w)); }), HasSubstr("tokenizer.ggml.merges"));
  auto v = tiny_bpe_writer({});
  v.remove("tokenizer.ggml.pre");
  EXPECT_THAT(error_of([&] { Tokenizer::from_gguf(read_back(v)); }), HasSubstr("tokenizer.ggml.pre"));
}

TEST(TokenizerErrors, ListsOfTheWrongLengthOrType) {
  auto w = tiny_spm_writer({"a"});
  w.set("tokenizer.ggml.scores", Value::f32_array({0.0f, 1.0f}));
  EXPECT_THAT(error_of([&] { Tokenizer::from_gguf(read_back(w)); }), HasSubstr("tokenizer.ggml.scores has 2 entries"));
  auto t = tiny_spm_writer({"a"});
  t.set("tokenizer.ggml.tokens", Value::u32(7));
  EXPECT_THAT(error_of([&] { Tokenizer::from_gguf(read_back(t)); }), HasSubstr("tokenizer.ggml.tokens"));
  auto b = tiny_spm_writer({"a"});
  b.set("tokenizer.ggml.bos_token_id", Value::u32(100000));
  EXPECT_THAT(error_of([&] { Tokenizer::from_gguf(read_back(b)); }), HasSubstr("bos_token_id = 100000"));
}

TEST(TokenizerErrors, DecodeOfAnIdOutOfRange) {
  const Tokenizer tok = Tokenizer::from_gguf(read_back(tiny_spm_writer({"a"})));
  const std::string msg = error_of([&] { tok.decode({5, 260, 7}); });
  EXPECT_THAT(msg, HasSubstr("token id 260"));
  EXPECT_THAT(msg, HasSubstr("260 tokens"));
  EXPECT_THAT(error_of([&] { tok.piece(-1); }), HasSubstr("token id -1"));
}

TEST(TokenizerErrors, InvalidUtf8Input) {
  const Tokenizer spm = Tokenizer::from_gguf(read_back(tiny_spm_writer({"a"})));
  const Tokenizer bpe = Tokenizer::from_gguf(read_back(tiny_bpe_writer({})));
  for (const std::string& bad : {std::string("ab\xC3"), std::string("a\x80"), std::string("\xC0\xAF"),
                                std::string("x\xED\xA0\x80"), std::string("\xF4\x90\x80\x80")}) {
    for (const Tokenizer* tok : {&spm, &bpe}) {
      const std::string msg = error_of([&] { tok->encode(bad); });
      EXPECT_THAT(msg, HasSubstr("invalid UTF-8 at byte offset")) << ::testing::PrintToString(bad);
    }
  }
  EXPECT_THAT(error_of([&] { spm.encode("ab\xC3"); }), HasSubstr("offset 2"));
}

}  // namespace
}  // namespace tessera::tokenizers
