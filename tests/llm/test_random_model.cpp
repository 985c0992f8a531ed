// tessera init-model's library side: seeded random-weight GGUF models of any shape that load, tokenize
// and run, byte-identical for one seed, in any weight type or llama-quantize mix.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tessera/core/error.h"
#include "tessera/core/temp_file.h"
#include "tessera/models/llm/llm_model.h"
#include "tessera/models/llm/random_model.h"
#include "tessera/ops/ops.h"
#include "tessera/quant/ggml_type.h"
#include "tessera/tokenizers/synthetic_vocab.h"
#include "tessera/tokenizers/tokenizer.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::models::llm;

namespace {

struct ModelTempDir {
  std::string path = create_temp_directory(std::filesystem::temp_directory_path() / "tessera-random-model");
  ~ModelTempDir() { remove_temp_directory(path); }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

RandomModelSpec small(Arch arch) {
  RandomModelSpec s;
  s.arch = arch;
  s.dim = 64;
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = arch == Arch::llama ? 2 : 0;
  s.ffn = 96;
  s.vocab = 700;
  s.ctx = 64;
  s.seed = 7;
  return s;
}

}  // namespace

TEST(RandomModel, LlamaAndGpt2LoadTokenizeAndGiveOrderOneLogits) {
  const ModelTempDir dir;
  for (const Arch arch : {Arch::llama, Arch::gpt2}) {
    const RandomModelSpec spec = small(arch);
    const std::string path = dir.file(std::string(arch_name(arch)) + ".gguf");
    write_random_model(spec, path);
    const LlmModel model = LlmModel::load(path);
    const LlmConfig& c = model.config();
    EXPECT_EQ(c.arch, arch);
    EXPECT_EQ(c.n_embd, 64);
    EXPECT_EQ(c.n_layer, 2);
    EXPECT_EQ(c.n_head_kv, arch == Arch::llama ? 2 : 4);
    EXPECT_EQ(c.n_vocab, 700);
    EXPECT_EQ(c.n_ctx, 64);

    const auto tok = tokenizers::Tokenizer::from_gguf(model.file());
    EXPECT_EQ(tok.vocab().size(), 700);
    const std::string text = "hello world, the quick brown fox: 42 \xC3\xA9t\xC3\xA9!";
    const auto ids = tok.encode(text);
    EXPECT_LT(ids.size(), text.size()) << "common pieces merge into multi-byte tokens";
    tokenizers::DecodeOptions plain;
    plain.strip_bos_eos = true;
    plain.clean_spaces = false;
    std::string back = tok.decode(ids, plain);
    if (arch == Arch::llama && back.starts_with(' ')) back.erase(0, 1);  // SentencePiece's space prefix
    EXPECT_EQ(back, text);

    std::vector<int64_t> tokens(ids.begin(), ids.end());
    const Array logits = model.forward(Tensor::from_vector(tokens, {static_cast<int64_t>(tokens.size())}),
                                       ops::arange(static_cast<int64_t>(tokens.size())))
                             .array()
                             .astype(DType::f64);
    double sum = 0, sq = 0;
    const std::vector<double> v = logits.to_vector<double>();
    for (double x : v) {
      ASSERT_TRUE(std::isfinite(x));
      sum += x;
      sq += x * x;
    }
    const double n = static_cast<double>(v.size()), sd = std::sqrt(sq / n - (sum / n) * (sum / n));
    EXPECT_GT(sd, 0.2) << arch_name(arch);
    EXPECT_LT(sd, 5.0) << arch_name(arch);
  }
}

TEST(RandomModel, SameSeedSameBytesOtherSeedOtherWeights) {
  const ModelTempDir dir;
  RandomModelSpec spec = small(Arch::llama);
  write_random_model(spec, dir.file("a.gguf"));
  write_random_model(spec, dir.file("b.gguf"));
  spec.seed = 8;
  write_random_model(spec, dir.file("c.gguf"));
  EXPECT_EQ(bytes_of(dir.file("a.gguf")), bytes_of(dir.file("b.gguf")));
  EXPECT_NE(bytes_of(dir.file("a.gguf")), bytes_of(dir.file("c.gguf")));
}

TEST(RandomModel, WeightTypesAndTheQ4KMMix) {
  const ModelTempDir dir;
  RandomModelSpec spec = small(Arch::llama);
  spec.dim = 256;  // whole K-quant blocks
  spec.ffn = 512;
  spec.layers = 8;
  spec.tied = true;
  spec.type = "q8_0";
  write_random_model(spec, dir.file("q8.gguf"));
  const auto q8 = io::gguf::Reader::open(dir.file("q8.gguf"));
  EXPECT_EQ(q8.find_tensor("blk.0.attn_q.weight")->type, quant::GgmlType::q8_0);
  EXPECT_EQ(q8.find_tensor("blk.0.attn_norm.weight")->type, quant::GgmlType::f32);
  EXPECT_EQ(q8.find_tensor("output.weight"), nullptr) << "tied: no output.weight";

  spec.type = "q4_k_m";
  write_random_model(spec, dir.file("q4km.gguf"));
  const auto km = io::gguf::Reader::open(dir.file("q4km.gguf"));
  EXPECT_EQ(km.find_tensor("token_embd.weight")->type, quant::GgmlType::q6_k) << "the tied lm_head";
  EXPECT_EQ(km.find_tensor("blk.0.attn_q.weight")->type, quant::GgmlType::q4_k);
  // use_more_bits over 8 layers: layers 0 and 7, and every third counted from the first eighth (3, 6).
  for (int layer : {0, 3, 6, 7}) {
    EXPECT_EQ(km.find_tensor("blk." + std::to_string(layer) + ".attn_v.weight")->type, quant::GgmlType::q6_k) << layer;
    EXPECT_EQ(km.find_tensor("blk." + std::to_string(layer) + ".ffn_down.weight")->type, quant::GgmlType::q6_k) << layer;
  }
  for (int layer : {1, 2, 4, 5}) {
    EXPECT_EQ(km.find_tensor("blk." + std::to_string(layer) + ".attn_v.weight")->type, quant::GgmlType::q4_k) << layer;
  }
  EXPECT_NO_THROW(LlmModel::load(dir.file("q4km.gguf")));
}

TEST(RandomModel, InconsistentSpecsNameTheField) {
  RandomModelSpec s = small(Arch::llama);
  s.dim = 66;
  EXPECT_TESSERA_ERROR(s.validate(), "dim = 66", "heads = 4");
  s = small(Arch::llama);
  s.kv_heads = 3;
  EXPECT_TESSERA_ERROR(s.validate(), "heads = 4", "kv-heads = 3");
  s = small(Arch::gpt2);
  s.kv_heads = 2;
  EXPECT_TESSERA_ERROR(s.validate(), "gpt2", "grouped-query");
  s = small(Arch::llama);
  s.vocab = 100;
  EXPECT_TESSERA_ERROR(s.validate(), "vocab = 100", "260");
  s = small(Arch::llama);
  s.type = "q9_9";
  EXPECT_TESSERA_ERROR(s.validate(), "q9_9", "q4_k_m");
  s = small(Arch::llama);
  s.layers = 0;
  EXPECT_TESSERA_ERROR(s.validate(), "layers = 0");
}

TEST(SyntheticVocab, ExactSizesAndValidMerges) {
  for (const int64_t n : {260, 1000, 40000}) {
    const auto spm = tokenizers::synthetic_vocab(tokenizers::Model::spm, n);
    EXPECT_EQ(spm.size(), n);
    EXPECT_EQ(spm.tokens[1], "<s>");
  }
  for (const int64_t n : {257, 1000, 40000}) {
    const auto bpe = tokenizers::synthetic_vocab(tokenizers::Model::bpe, n);
    EXPECT_EQ(bpe.size(), n);
    EXPECT_EQ(bpe.tokens.back(), "<|endoftext|>");
    EXPECT_EQ(static_cast<int64_t>(bpe.merge_ranks.size()), n - 257);
  }
  EXPECT_TESSERA_ERROR(tokenizers::synthetic_vocab(tokenizers::Model::spm, 259), "260");
}
