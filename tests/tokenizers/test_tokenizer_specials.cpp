// BOS/EOS and special tokens on the real vocabularies: what llama.cpp's tokenizer gives with
// add_special and parse_special, and how decode renders or drops them.
#include <gtest/gtest.h>

#include "tessera/tokenizers/tokenizer.h"
#include "tokenizers/vector_files.h"

namespace tessera::tokenizers {
namespace {

using Ids = std::vector<TokenId>;

TEST(TokenizerSpecials, SpmAddsBosAndTheLeadingSpace) {
  TESSERA_REQUIRE_VOCAB(path, "llama-spm");
  const Tokenizer tok = Tokenizer::from_gguf(path.string());
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  EXPECT_EQ(tok.encode("Hello world"), (Ids{1, 15043, 3186}));
  EXPECT_EQ(tok.encode(""), (Ids{1}));  // add_bos_token = true, nothing else
  EXPECT_EQ(tok.encode("", {.add_special = false}), Ids{});
  // The BOS renders as its text, or goes with strip_bos_eos (the space after it then stays, as llama.cpp).
  EXPECT_EQ(tok.decode({1, 15043, 3186}), "<s> Hello world");
  EXPECT_EQ(tok.decode({1, 15043, 3186}, {.strip_bos_eos = true}), " Hello world");
  EXPECT_EQ(tok.decode({1, 15043, 3186}, {.render_special = false}), " Hello world");
  EXPECT_EQ(tok.decode({15043, 3186}), "Hello world");
  EXPECT_EQ(tok.piece(15043), " Hello");
  EXPECT_EQ(tok.piece(3 + 0x41), "A");  // byte token <0x41>
}

TEST(TokenizerSpecials, SpmMatchesControlTokensOnlyWhenAsked) {
  TESSERA_REQUIRE_VOCAB(path, "llama-spm");
  const Tokenizer tok = Tokenizer::from_gguf(path.string());
  const Ids parsed = tok.encode("Hello</s>world", {.add_special = false, .parse_special = true});
  // A space prefix again after the special token, as llama.cpp does.
  EXPECT_EQ(parsed, (Ids{15043, 2, 3186}));
  const Ids literal = tok.encode("Hello</s>world", {.add_special = false});
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 2), 0);
  EXPECT_EQ(tok.decode(literal), "Hello</s>world");
}

TEST(TokenizerSpecials, Gpt2EndOfTextIsOneTokenWhenParsed) {
  TESSERA_REQUIRE_VOCAB(path, "gpt-2");
  const Tokenizer tok = Tokenizer::from_gguf(path.string());
  EXPECT_EQ(tok.bos(), 50256);
  EXPECT_EQ(tok.encode("Hello world"), (Ids{15496, 995}));  // no BOS: add_bos_token is not set
  EXPECT_EQ(tok.encode("Hello<|endoftext|> world", {.parse_special = true}), (Ids{15496, 50256, 995}));
  const Ids literal = tok.encode("Hello<|endoftext|>");
  EXPECT_GT(literal.size(), 2u);
  EXPECT_EQ(tok.decode(literal), "Hello<|endoftext|>");
  EXPECT_EQ(tok.decode({15496, 50256, 995}, {.render_special = false}), "Hello world");
}

TEST(TokenizerSpecials, Gpt2DecodeCleansSpacesLikeLlamaCpp) {
  TESSERA_REQUIRE_VOCAB(path, "gpt-2");
  const Tokenizer tok = Tokenizer::from_gguf(path.string());
  const Ids ids = tok.encode("Hello , world ! it 's");
  EXPECT_EQ(tok.decode(ids), "Hello, world! it's");
  EXPECT_EQ(tok.decode(ids, {.clean_spaces = false}), "Hello , world ! it 's");
}

TEST(TokenizerSpecials, Llama3AddsBeginOfText) {
  TESSERA_REQUIRE_VOCAB(path, "llama-bpe");
  const Tokenizer tok = Tokenizer::from_gguf(path.string());
  EXPECT_EQ(tok.bos(), 128000);
  EXPECT_EQ(tok.encode("Hello world"), (Ids{128000, 9906, 1917}));
  EXPECT_EQ(tok.encode("<|begin_of_text|>Hello world", {.add_special = false, .parse_special = true}),
            (Ids{128000, 9906, 1917}));
  EXPECT_EQ(tok.decode({128000, 9906, 1917}), "<|begin_of_text|>Hello world");
  EXPECT_EQ(tok.decode({128000, 9906, 1917}, {.strip_bos_eos = true}), "Hello world");
}

}  // namespace
}  // namespace tessera::tokenizers
