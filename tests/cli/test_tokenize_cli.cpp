// tessera tokenize: ids and pieces of a prompt, as text and as JSON, and its failures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "gguf/gguf_test_util.h"
#include "tessera/io/gguf/gguf_writer.h"

namespace tessera::test {
namespace {

std::filesystem::path spm_vocab() {
  const auto dir = testdata_dir();
  return dir ? *dir / "tokenizers" / "ggml-vocab-llama-spm.gguf" : std::filesystem::path();
}

TEST_F(CliTest, TokenizeListsIdsAndPieces) {
  const auto vocab = spm_vocab();
  if (vocab.empty() || !std::filesystem::exists(vocab)) GTEST_SKIP() << "tokenizer test vocab not found";
  const CliResult r = run("tokenize -m " + shell_quote(vocab.string()) + " -p 'Hello world'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "     1 -> \"<s>\"\n 15043 -> \" Hello\"\n  3186 -> \" world\"\n");
  const CliResult no_bos = run("tokenize -m " + shell_quote(vocab.string()) + " -p 'Hello world' --no-bos");
  EXPECT_EQ(count_lines(no_bos.out), 2) << no_bos.out;
}

TEST_F(CliTest, TokenizeJson) {
  const auto vocab = spm_vocab();
  if (vocab.empty() || !std::filesystem::exists(vocab)) GTEST_SKIP() << "tokenizer test vocab not found";
  const CliResult r = run("tokenize -m " + shell_quote(vocab.string()) + " -p 'Hello</s>' --json --parse-special");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ids"], nlohmann::json({1, 15043, 2}));
  EXPECT_EQ(j["pieces"], nlohmann::json({"<s>", " Hello", "</s>"}));
  EXPECT_EQ(j["count"], 3);
}

TEST_F(CliTest, TokenizeFailures) {
  io::gguf::Writer w;
  w.set("general.architecture", io::gguf::Value::string("llama"));
  w.write(path("no_tokenizer.gguf").string());
  const CliResult r = run("tokenize -m no_tokenizer.gguf -p hi");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tokenizer.ggml.model"), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(run("tokenize -p hi").exit_code, 2);                       // no -m
  EXPECT_EQ(run("tokenize -m missing.gguf -p hi").exit_code, 2);       // not a file
  const auto vocab = spm_vocab();
  if (vocab.empty() || !std::filesystem::exists(vocab)) return;
  const CliResult bad = run("tokenize -m " + shell_quote(vocab.string()) + " -p \"$(printf 'a\\377')\"");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("invalid UTF-8"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tessera::test
