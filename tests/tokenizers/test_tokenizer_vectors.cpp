// Every one of llama.cpp's tokenizer test vectors for the three vocabularies (GPT-2, Llama 3 BPE,
// Llama SentencePiece): encode without BOS/EOS and without parsing special tokens, as test-tokenizer-0
// does, must give exactly the expected ids; decoding them must give the input back.
#include <gtest/gtest.h>

#include "tessera/tokenizers/tokenizer.h"
#include "tokenizers/vector_files.h"

namespace tessera::tokenizers {
namespace {

std::string ids_text(const std::vector<TokenId>& ids) {
  std::string s;
  for (TokenId id : ids) s += " " + std::to_string(id);
  return s;
}

class VectorTest : public ::testing::TestWithParam<const char*> {};

TEST_P(VectorTest, EncodesEveryVectorAndDecodesItBack) {
  TESSERA_REQUIRE_VOCAB(path, GetParam());
  const Tokenizer tok = Tokenizer::from_gguf(path.string());
  const auto cases = test::read_tokenizer_cases(path);
  ASSERT_EQ(cases.size(), 46u);
  int encoded = 0, round_trips = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const auto ids = tok.encode(c.text, {.add_special = false, .parse_special = false});
    EXPECT_EQ(ids, c.ids) << "case " << i << " " << ::testing::PrintToString(c.text) << "\n got:     " << ids_text(ids)
                          << "\n expected:" << ids_text(c.ids);
    encoded += ids == c.ids;
    const std::string back = tok.decode(c.ids, {.clean_spaces = false});
    EXPECT_EQ(back, c.text) << "decode of case " << i;
    round_trips += back == c.text;
  }
  std::cout << GetParam() << ": " << encoded << "/" << cases.size() << " encoded, " << round_trips << "/"
            << cases.size() << " decoded back\n";
}

INSTANTIATE_TEST_SUITE_P(Vocabs, VectorTest, ::testing::Values("gpt-2", "llama-bpe", "llama-spm"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace tessera::tokenizers
