// tessera init-model writes a random-weight GGUF that generate and bench llm run; bad shapes are usage
// errors naming the field; bench llm's --json is what bench/compare_llamacpp.py reads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace tessera::test {
namespace {

TEST_F(CliTest, InitModelThenGenerateAndBenchLlm) {
  const std::string model = shell_quote(path("m.gguf").string());
  const CliResult made = run("init-model --arch llama --dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --vocab 500 "
                             "--ctx 64 --type q8_0 --seed 3 -o " + model);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.out.find("random llama (2 layers, dim 64, vocab 500, q8_0)"), std::string::npos) << made.out;

  const CliResult gen = run("generate -m " + model + " -p 'hello there' -n 5 --temp 0 --ctx 32 --threads 1 --json");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const nlohmann::json g = nlohmann::json::parse(gen.out.substr(gen.out.rfind('{')));
  EXPECT_EQ(g["tokens"].size(), 5u);

  const CliResult bench = run("bench llm -m " + model + " -p 8 -n 4 -r 2 --threads 1 --json");
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  const nlohmann::json b = nlohmann::json::parse(bench.out.substr(bench.out.rfind('{')));
  for (const char* key : {"prefill_tokens_per_s", "decode_tokens_per_s", "load_s", "first_token_s", "peak_rss_bytes"}) {
    EXPECT_GT(b[key].get<double>(), 0.0) << key;
  }
  EXPECT_EQ(b["threads"], 1);
  EXPECT_EQ(b["prefill_runs"].size(), 2u);
}

TEST_F(CliTest, InitModelAndBenchLlmUsageErrors) {
  const std::string out = shell_quote(path("x.gguf").string());
  const CliResult shape = run("init-model --dim 100 --heads 3 -o " + out);
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.err.find("dim = 100 is not a multiple of heads = 3"), std::string::npos) << shape.err;
  EXPECT_FALSE(std::filesystem::exists(path("x.gguf"))) << "nothing written on a refusal";
  const CliResult type = run("init-model --type q3_z -o " + out);
  EXPECT_EQ(type.exit_code, 2);
  EXPECT_NE(type.err.find("q3_z"), std::string::npos) << type.err;
  EXPECT_EQ(run("init-model --arch mamba -o " + out).exit_code, 2);
  EXPECT_EQ(run("bench llm -m " + out).exit_code, 2) << "a missing model file";
}

}  // namespace
}  // namespace tessera::test
