#pragma once
// llama.cpp's tokenizer test vectors (tests/test-tokenizer-0): VOCAB.gguf.inp holds the inputs, each
// followed by "\n__ggml_vocab_test__\n"; VOCAB.gguf.out holds one line of expected ids per input.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_test_util.h"
#include "tessera/tokenizers/vocab.h"

namespace tessera::test {

struct TokenizerCase {
  std::string text;
  std::vector<tokenizers::TokenId> ids;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<TokenizerCase> read_tokenizer_cases(const std::filesystem::path& gguf) {
  const std::string inputs = slurp(gguf.string() + ".inp");
  const std::string outputs = slurp(gguf.string() + ".out");
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<TokenizerCase> cases;
  for (size_t at = 0; at < inputs.size();) {
    const size_t end = inputs.find(separator, at);
    if (end == std::string::npos) break;  // the remainder after the last separator is empty
    cases.push_back({inputs.substr(at, end - at), {}});
    at = end + separator.size();
  }
  std::istringstream lines(outputs);
  std::string line;
  size_t i = 0;
  while (std::getline(lines, line)) {
    if (i >= cases.size()) {
      ADD_FAILURE() << gguf << ".out has more lines than .inp has inputs";
      break;
    }
    std::istringstream words(line);
    for (long id = 0; words >> id;) cases[i].ids.push_back(static_cast<tokenizers::TokenId>(id));
    ++i;
  }
  EXPECT_EQ(i, cases.size()) << gguf << ": .out lines vs .inp inputs";
  return cases;
}

// The vocab file, or a skip when the test data is absent.
#define TESSERA_REQUIRE_VOCAB(path, name)                                                                  \
  TESSERA_REQUIRE_TESTDATA(path##_root);                                                                   \
  const std::filesystem::path path = path##_root / "tokenizers" / (std::string("ggml-vocab-") + name + ".gguf"); \
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "tokenizer test vocab not found: " << path

}  // namespace tessera::test
