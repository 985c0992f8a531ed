// tessera convert on a small Hugging Face Llama folder (written here with Tessera's safetensors
// writer): the GGUF it writes runs in generate and tokenize; a wrong --type is a usage error; a folder
// that is not a model is one error line naming what is missing, and nothing is written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "cli/cli_runner.h"
#include "tessera/io/npy.h"
#include "tessera/io/safetensors.h"

namespace tessera::test {
namespace {

using nlohmann::json;

// A two-layer Llama (GQA, untied) with a SentencePiece-style tokenizer.json of bytes and a few pieces.
void write_llama_folder(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const int64_t d = 32, heads = 4, kv = 2, hd = 8, ff = 48, vocab = 270;
  write_file(dir / "config.json", json{{"model_type", "llama"},
                                       {"architectures", {"LlamaForCausalLM"}},
                                       {"hidden_size", d},
                                       {"num_hidden_layers", 2},
                                       {"num_attention_heads", heads},
                                       {"num_key_value_heads", kv},
                                       {"intermediate_size", ff},
                                       {"max_position_embeddings", 64},
                                       {"rms_norm_eps", 1e-5},
                                       {"rope_theta", 10000.0},
                                       {"vocab_size", vocab},
                                       {"tie_word_embeddings", false}}
                                      .dump());
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.2f);
  const auto random = [&](const Shape& shape, float offset = 0.0f) {
    Array a = Array::empty(DType::f32, shape);
    for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = offset + normal(rng);
    return a.astype(DType::bf16);
  };
  StateDict t{{"model.embed_tokens.weight", random({vocab, d})},
              {"model.norm.weight", random({d}, 1.0f)},
              {"lm_head.weight", random({vocab, d})}};
  for (int i = 0; i < 2; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    t.emplace(l + "input_layernorm.weight", random({d}, 1.0f));
    t.emplace(l + "self_attn.q_proj.weight", random({heads * hd, d}));
    t.emplace(l + "self_attn.k_proj.weight", random({kv * hd, d}));
    t.emplace(l + "self_attn.v_proj.weight", random({kv * hd, d}));
    t.emplace(l + "self_attn.o_proj.weight", random({d, heads * hd}));
    t.emplace(l + "post_attention_layernorm.weight", random({d}, 1.0f));
    t.emplace(l + "mlp.gate_proj.weight", random({ff, d}));
    t.emplace(l + "mlp.up_proj.weight", random({ff, d}));
    t.emplace(l + "mlp.down_proj.weight", random({d, ff}));
  }
  io::save_safetensors((dir / "model.safetensors").string(), t);

  json v = json::object();
  int n = 0;
  for (const char* s : {"<unk>", "<s>", "</s>"}) v[s] = n++;
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    v[hex] = n++;
  }
  const std::string space = "\xE2\x96\x81";
  for (const std::string& s : {space, std::string("h"), std::string("i"), space + "h", space + "hi"}) v[s] = n++;
  json model = {{"type", "BPE"}, {"byte_fallback", true}, {"unk_token", "<unk>"}, {"vocab", v}};
  model["merges"] = {space + " h", space + "h i"};
  json added = json::array();
  for (int id = 0; id < 3; ++id) {
    added.push_back({{"id", id}, {"content", id == 0 ? "<unk>" : id == 1 ? "<s>" : "</s>"}, {"special", true}});
  }
  json normalizers = json::array();
  normalizers.push_back({{"type", "Prepend"}, {"prepend", space}});
  normalizers.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", space}});
  json tokenizer = json::object();
  tokenizer["model"] = model;
  tokenizer["added_tokens"] = added;
  tokenizer["normalizer"] = {{"type", "Sequence"}, {"normalizers", normalizers}};
  write_file(dir / "tokenizer.json", tokenizer.dump());
}

TEST_F(CliTest, ConvertThenGenerateAndTokenize) {
  write_llama_folder(path("hf"));
  const std::string model = shell_quote(path("m.gguf").string());
  const CliResult made = run("convert " + shell_quote(path("hf").string()) + " -o " + model + " --type q8_0");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.out.find("llama (2 layers, dim 32, 4 heads / 2 kv, vocab 270, q8_0)"), std::string::npos) << made.out;
  EXPECT_NE(made.out.find("SentencePiece"), std::string::npos) << made.out;
  EXPECT_EQ(made.err, "") << "no progress lines when stderr is not a terminal";

  const std::string npy = shell_quote(path("logits.npy").string());
  const CliResult gen =
      run("generate -m " + model + " --tokens 1,262,100,7 -n 0 --dump-logits " + npy + " --threads 1");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Array logits = io::load_npy(path("logits.npy").string());
  EXPECT_EQ(shape_str(logits.shape()), "[4, 270]");

  const CliResult tok = run("tokenize -m " + model + " -p 'hi hi!' --json");
  ASSERT_EQ(tok.exit_code, 0) << tok.err;
  const json ids = json::parse(tok.out.substr(tok.out.find('{')))["ids"];
  EXPECT_EQ(ids, json({1, 263, 263, 3 + '!'})) << tok.out;  // <s> ▁hi ▁hi <0x21>

  const CliResult quiet = run("convert " + shell_quote(path("hf").string()) + " -o " + model + " -q");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
}

TEST_F(CliTest, ConvertErrors) {
  const std::string out = shell_quote(path("x.gguf").string());
  write_llama_folder(path("hf"));
  const CliResult type = run("convert " + shell_quote(path("hf").string()) + " -o " + out + " --type q3_z");
  EXPECT_EQ(type.exit_code, 2);
  EXPECT_NE(type.err.find("q3_z"), std::string::npos) << type.err;

  std::filesystem::remove(path("hf") / "model.safetensors");
  const CliResult weights = run("convert " + shell_quote(path("hf").string()) + " -o " + out);
  EXPECT_EQ(weights.exit_code, 1);
  EXPECT_NE(weights.err.find("tessera: error: "), std::string::npos) << weights.err;
  EXPECT_NE(weights.err.find("no weights"), std::string::npos) << weights.err;
  EXPECT_EQ(count_lines(weights.err), 1) << weights.err;

  std::filesystem::create_directories(path("bert"));
  write_file(path("bert") / "config.json", R"({"model_type": "bert"})");
  const CliResult bert = run("convert " + shell_quote(path("bert").string()) + " -o " + out);
  EXPECT_EQ(bert.exit_code, 1);
  EXPECT_NE(bert.err.find("model_type \"bert\" is not supported"), std::string::npos) << bert.err;
  EXPECT_EQ(run("convert -o " + out).exit_code, 2) << "the folder is required";
  EXPECT_FALSE(std::filesystem::exists(path("x.gguf"))) << "nothing written on a failure";
}

}  // namespace
}  // namespace tessera::test
