// The algorithms on hand-made vocabularies, where the expected ids follow from the rules alone:
// SentencePiece joins by score and falls back to bytes, BPE applies merges by rank, Llama 3 keeps a
// word that is a token whole, and the GPT-2 byte alphabet round-trips every byte.
#include <gtest/gtest.h>

#include <set>

#include "tessera/tokenizers/byte_unicode.h"
#include "tessera/tokenizers/tokenizer.h"
#include "tokenizers/tiny_vocab.h"

namespace tessera::tokenizers {
namespace {

using Ids = std::vector<TokenId>;
using test::read_back;

TEST(TokenizerTiny, SpmJoinsByScoreAndFallsBackToBytes) {
  // ids 259.. : "▁", "a", "b", "ab", "▁a", "▁ab"; higher score = lower id.
  const Tokenizer tok = Tokenizer::from_gguf(read_back(test::tiny_spm_writer({"\xE2\x96\x81", "a", "b", "ab", "\xE2\x96\x81" "a", "\xE2\x96\x81" "ab"})));
  // "▁ab": "ab" (262) outscores "▁a" (263), then "▁"+"ab" is 264.
  EXPECT_EQ(tok.encode("ab", {.add_special = false}), (Ids{264}));
  EXPECT_EQ(tok.encode("ab"), (Ids{1, 264}));
  // "z" is no token: byte fallback <0x7A> = 3 + 0x7A.
  EXPECT_EQ(tok.encode("az", {.add_special = false}), (Ids{263, 3 + 0x7A}));
  // A character of several bytes falls back to each of its bytes.
  EXPECT_EQ(tok.encode("\xC3\xA9", {.add_special = false}), (Ids{259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tok.decode({259, 3 + 0xC3, 3 + 0xA9}), "\xC3\xA9");
}

TEST(TokenizerTiny, SpmWithoutSpacePrefix) {
  auto w = test::tiny_spm_writer({"a", "b"});
  w.set("tokenizer.ggml.add_space_prefix", test::Value::boolean(false));
  w.set("tokenizer.ggml.add_bos_token", test::Value::boolean(false));
  w.set("tokenizer.ggml.add_eos_token", test::Value::boolean(true));
  const Tokenizer tok = Tokenizer::from_gguf(read_back(w));
  EXPECT_EQ(tok.encode("ab"), (Ids{259, 260, 2}));
  EXPECT_EQ(tok.decode({259, 260, 2}, {.strip_bos_eos = true}), "ab");
}

TEST(TokenizerTiny, BpeAppliesMergesByRank) {
  const std::string g = byte_to_unicode(' ');  // "Ġ"
  // Ranks: (l,o)=0 -> 256 "lo", (lo,w)=1 -> 257 "low", (Ġ,low)=2 -> 258 "Ġlow", (e,r)=3 -> 259.
  const Tokenizer tok =
      Tokenizer::from_gguf(read_back(test::tiny_bpe_writer({{"l", "o"}, {"lo", "w"}, {g, "low"}, {"e", "r"}})));
  EXPECT_EQ(tok.encode("low lower"), (Ids{257, 258, 259}));
  EXPECT_EQ(tok.decode({257, 258, 259}), "low lower");
  // The GPT-2 pattern keeps a trailing space as a word of its own.
  EXPECT_EQ(tok.encode("low "), (Ids{257, ' ' - 0}));
}

TEST(TokenizerTiny, Llama3KeepsAWordThatIsATokenWhole) {
  // "abc" is a token (via merges b+c, a+bc), but the merge (a,b) ranks first: without ignore_merges
  // "abc" would become "ab" + "c".
  auto w = test::tiny_bpe_writer({{"a", "b"}, {"b", "c"}, {"a", "bc"}}, "llama-bpe");
  const Tokenizer llama3 = Tokenizer::from_gguf(read_back(w));
  EXPECT_EQ(llama3.encode("abc", {.add_special = false}), (Ids{258}));
  const Tokenizer gpt2 = Tokenizer::from_gguf(read_back(test::tiny_bpe_writer({{"a", "b"}, {"b", "c"}, {"a", "bc"}})));
  EXPECT_EQ(gpt2.encode("abc"), (Ids{256, 'c'}));
}

TEST(TokenizerTiny, ByteAlphabetRoundTripsEveryByte) {
  std::set<std::string> seen;
  for (int b = 0; b < 256; ++b) {
    const std::string& s = byte_to_unicode(static_cast<unsigned char>(b));
    seen.insert(s);
    size_t at = 0;
    uint32_t cp = 0;
    for (unsigned char c : s) cp = at++ == 0 ? (s.size() == 1 ? c : c & 0x1F) : (cp << 6) | (c & 0x3F);
    ASSERT_EQ(unicode_to_byte(cp), static_cast<unsigned char>(b)) << b;
  }
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(byte_to_unicode(' '), "\xC4\xA0");  // Ġ
  EXPECT_EQ(byte_to_unicode('!'), "!");
}

}  // namespace
}  // namespace tessera::tokenizers
