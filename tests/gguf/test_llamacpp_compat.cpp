// Compatibility with llama.cpp, on the tiny models of ../shared/testdata (written and quantized by
// llama.cpp, dequantized by gguf-py): every file reads, dequantization reproduces gguf-py's values bit
// for bit, and quantizing the f32 source reproduces llama-quantize's bytes for every type.
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>

#include "gguf_test_util.h"
#include "tessera/io/gguf/quantize_file.h"
#include "tessera/io/npy.h"
#include "tessera/quant/quantize.h"

using namespace tessera;
using namespace tessera::test;
namespace gguf = tessera::io::gguf;
using quant::GgmlType;

namespace {

const char* kQuantizedTypes[] = {"f16",  "bf16", "q8_0", "q4_0", "q4_1", "q5_0",
                                 "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"};

// Quantizes `source` (an f32 tensor of the f32 model) as `type` and counts differing bytes against
// the same tensor in `target`.
int64_t differing_bytes(const gguf::Reader& f32_model, const gguf::TensorInfo& target_info,
                        const gguf::Reader& target) {
  const gguf::TensorInfo& src = f32_model.tensor(target_info.name);
  const Array values = f32_model.dequantize(src);
  const std::vector<uint8_t> ours =
      quant::quantize(target_info.type, values.data<float>(), src.num_rows(), src.row_length());
  EXPECT_EQ(ours.size(), target_info.nbytes) << target_info.name;
  if (ours.size() != target_info.nbytes) return -1;
  const uint8_t* theirs = target.tensor_data(target_info);
  int64_t diff = 0;
  for (size_t i = 0; i < ours.size(); ++i) diff += ours[i] != theirs[i];
  return diff;
}

}  // namespace

TEST(LlamaCppCompat, DequantizationMatchesGgufPyBitForBit) {
  TESSERA_REQUIRE_TESTDATA(data);
  for (const char* type : kQuantizedTypes) {
    SCOPED_TRACE(type);
    const gguf::Reader model =
        gguf::Reader::open((data / "gguf" / ("tiny-llama-" + std::string(type) + ".gguf")).string());
    const Array ours = model.dequantize("blk.0.attn_k.weight");
    const Array ref = io::load_npy((data / "dequant" / (std::string(type) + ".blk.0.attn_k.weight.npy")).string());
    ASSERT_EQ(shape_str(ours.shape()), shape_str(ref.shape()));
    ASSERT_EQ(ref.dtype(), DType::f32);
    EXPECT_EQ(std::memcmp(ours.data<float>(), ref.contiguous().data<float>(), ours.nbytes()), 0)
        << "dequantized " << type << " differs from gguf-py";
  }
}

TEST(LlamaCppCompat, QuantizingTheF32SourceReproducesLlamaQuantize) {
  TESSERA_REQUIRE_TESTDATA(data);
  const gguf::Reader f32_model = gguf::Reader::open((data / "gguf" / "tiny-llama-f32.gguf").string());
  for (const char* type : kQuantizedTypes) {
    const gguf::Reader model =
        gguf::Reader::open((data / "gguf" / ("tiny-llama-" + std::string(type) + ".gguf")).string());
    int tensors = 0;
    for (const gguf::TensorInfo& t : model.tensors()) {
      if (t.type == GgmlType::f32) continue;  // norms stay f32
      ++tensors;
      const int64_t diff = differing_bytes(f32_model, t, model);
      EXPECT_EQ(diff, 0) << type << " tensor " << t.name << ": " << diff << " of " << t.nbytes << " bytes differ";
    }
    EXPECT_EQ(tensors, 16) << type;
  }
}

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct ScratchFile {
  std::filesystem::path path;
  explicit ScratchFile(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("tessera_compat_" + std::to_string(::getpid()) + "_" + name)) {}
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

}  // namespace

TEST(LlamaCppCompat, ReadsEveryFileWithTheDocumentedContents) {
  TESSERA_REQUIRE_TESTDATA(data);
  // Tensor types per file, from the test data's README.
  const std::map<std::string, std::map<std::string, int>> expected = {
      {"tiny-gpt2-f32", {{"f32", 29}}},
      {"tiny-gpt2-q8_0", {{"f32", 19}, {"q8_0", 10}}},
      {"tiny-llama-bf16", {{"bf16", 16}, {"f32", 5}}},
      {"tiny-llama-f16", {{"f16", 16}, {"f32", 5}}},
      {"tiny-llama-f32", {{"f32", 21}}},
      {"tiny-llama-q2_k", {{"q2_k", 16}, {"f32", 5}}},
      {"tiny-llama-q3_k", {{"q3_k", 16}, {"f32", 5}}},
      {"tiny-llama-q4_0", {{"q4_0", 16}, {"f32", 5}}},
      {"tiny-llama-q4_1", {{"q4_1", 16}, {"f32", 5}}},
      {"tiny-llama-q4_k", {{"q4_k", 16}, {"f32", 5}}},
      {"tiny-llama-q4_k_m", {{"q4_k", 13}, {"f32", 5}, {"q6_k", 3}}},
      {"tiny-llama-q5_0", {{"q5_0", 16}, {"f32", 5}}},
      {"tiny-llama-q5_1", {{"q5_1", 16}, {"f32", 5}}},
      {"tiny-llama-q5_k", {{"q5_k", 16}, {"f32", 5}}},
      {"tiny-llama-q6_k", {{"q6_k", 16}, {"f32", 5}}},
      {"tiny-llama-q8_0", {{"q8_0", 16}, {"f32", 5}}},
  };
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data / "gguf")) {
    const std::string stem = entry.path().stem().string();
    SCOPED_TRACE(stem);
    const gguf::Reader r = gguf::Reader::open(entry.path().string());
    std::map<std::string, int> counts;
    for (const gguf::TensorInfo& t : r.tensors()) {
      ++counts[quant::type_name(t.type)];
      EXPECT_EQ(r.dequantize(t).numel(), t.numel());
    }
    ASSERT_TRUE(expected.count(stem)) << "unexpected file";
    EXPECT_EQ(counts, expected.at(stem));
    const bool llama = stem.starts_with("tiny-llama");
    EXPECT_EQ(r.get("general.architecture").as_string(), llama ? "llama" : "gpt2");
    EXPECT_EQ(r.get("tokenizer.ggml.tokens").array_size(), llama ? 1024u : 512u);
    EXPECT_EQ(r.alignment(), 32u);
    EXPECT_EQ(r.version(), 3u);
    if (llama) {
      EXPECT_EQ(r.get("llama.attention.layer_norm_rms_epsilon").as_f64(), static_cast<double>(1e-5f));
      EXPECT_EQ(r.get("tokenizer.ggml.bos_token_id").as_u64(), 1u);
      EXPECT_EQ(r.get("tokenizer.ggml.scores").as_f64s()[300], -300.0);
      EXPECT_EQ(shape_str(r.tensor("blk.0.ffn_down.weight").shape()), "[256, 768]");
    } else {
      EXPECT_EQ(r.get("tokenizer.ggml.merges").array_size(), 255u);
    }
    ++files;
  }
  EXPECT_EQ(files, 16);
  // Vocab-only files: no tensors, large string arrays.
  const std::map<std::string, std::pair<size_t, size_t>> vocabs = {{"ggml-vocab-gpt-2", {50257, 50000}},
                                                                   {"ggml-vocab-llama-spm", {32000, 0}},
                                                                   {"ggml-vocab-llama-bpe", {128256, 280147}}};
  for (const auto& [name, sizes] : vocabs) {
    const gguf::Reader r = gguf::Reader::open((data / "tokenizers" / (name + ".gguf")).string());
    EXPECT_EQ(r.tensors().size(), 0u) << name;
    EXPECT_EQ(r.get("tokenizer.ggml.tokens").as_strings().size(), sizes.first) << name;
    const gguf::Value* merges = r.find("tokenizer.ggml.merges");
    EXPECT_EQ(merges ? merges->array_size() : 0u, sizes.second) << name;
  }
}

TEST(LlamaCppCompat, RewritingAFileReproducesItByteForByte) {
  TESSERA_REQUIRE_TESTDATA(data);
  for (const char* name : {"tiny-llama-q4_k_m", "tiny-llama-bf16", "tiny-gpt2-q8_0"}) {
    const std::filesystem::path path = data / "gguf" / (std::string(name) + ".gguf");
    const gguf::Reader r = gguf::Reader::open(path.string());
    gguf::Writer w(r.alignment());
    w.copy_metadata(r);
    for (const gguf::TensorInfo& t : r.tensors()) {
      w.add_tensor(t.name, t.type, t.ne, std::span<const uint8_t>(r.tensor_data(t), t.nbytes));
    }
    EXPECT_TRUE(w.serialize() == slurp(path)) << name;
  }
}

TEST(LlamaCppCompat, QuantizeFileReproducesLlamaQuantizeFilesExactly) {
  TESSERA_REQUIRE_TESTDATA(data);
  const std::string f32 = (data / "gguf" / "tiny-llama-f32.gguf").string();
  for (const char* type : kQuantizedTypes) {
    SCOPED_TRACE(type);
    ScratchFile out(std::string(type) + ".gguf");
    gguf::QuantizeOptions options;
    options.type = quant::parse_type(type);
    const auto plans = gguf::quantize_file(f32, out.path.string(), options);
    EXPECT_EQ(plans.size(), 21u);
    EXPECT_TRUE(slurp(out.path) == slurp(data / "gguf" / ("tiny-llama-" + std::string(type) + ".gguf")))
        << "tessera quantize --type " << type << " differs from llama-quantize --pure";
  }
  // Q4_K_M is Q4_K with Q6_K for output.weight, blk.1.attn_v and blk.1.ffn_down in this model.
  ScratchFile mix("q4_k_m.gguf");
  gguf::QuantizeOptions options;
  options.type = GgmlType::q4_k;
  for (const char* spec : {"output.weight=q6_k", "blk.1.attn_v.weight=q6_k", "blk.1.ffn_down.weight=q6_k"}) {
    options.overrides.push_back(gguf::TypeOverride::parse(spec));
  }
  gguf::quantize_file(f32, mix.path.string(), options);
  EXPECT_TRUE(slurp(mix.path) == slurp(data / "gguf" / "tiny-llama-q4_k_m.gguf"));
  // GPT-2 keeps position_embd in f32, as llama-quantize does.
  ScratchFile gpt2("gpt2-q8_0.gguf");
  options = {};
  options.type = GgmlType::q8_0;
  gguf::quantize_file((data / "gguf" / "tiny-gpt2-f32.gguf").string(), gpt2.path.string(), options);
  EXPECT_TRUE(slurp(gpt2.path) == slurp(data / "gguf" / "tiny-gpt2-q8_0.gguf"));
}

TEST(LlamaCppCompat, QuantizingTheNpySourceMatchesEveryFile) {
  TESSERA_REQUIRE_TESTDATA(data);
  const Array src = io::load_npy((data / "dequant" / "blk.0.attn_k.weight.f32.npy").string()).contiguous();
  ASSERT_EQ(shape_str(src.shape()), "[64, 256]");
  for (const char* type : kQuantizedTypes) {
    const gguf::Reader model =
        gguf::Reader::open((data / "gguf" / ("tiny-llama-" + std::string(type) + ".gguf")).string());
    const gguf::TensorInfo& t = model.tensor("blk.0.attn_k.weight");
    const std::vector<uint8_t> ours = quant::quantize(t.type, src.data<float>(), 64, 256);
    ASSERT_EQ(ours.size(), t.nbytes) << type;
    EXPECT_EQ(std::memcmp(ours.data(), model.tensor_data(t), ours.size()), 0) << type;
  }
}
