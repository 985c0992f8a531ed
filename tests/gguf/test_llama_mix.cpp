// llama-quantize's mixes through quantize_file: the type of every tensor of small Llama-shaped GGUF
// models, each expectation written from the rules in llama.cpp's llama_tensor_get_type_impl (v0.5.0),
// the fallback for rows that are not whole super-blocks, the file-type label, byte identity with
// llama-quantize's Q4_K_M file, and a training checkpoint losing its optimiser state.
#include <filesystem>
#include <fstream>
#include <map>
#include <sys/wait.h>
#include <tuple>

#include "gguf_test_util.h"
#include "io/io_test_util.h"
#include "tessera/io/gguf/quantize_file.h"
#include "tessera/io/safetensors.h"
#include "tessera/models/vision.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/checkpoint.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
namespace gguf = tessera::io::gguf;
using quant::GgmlType;

namespace {

struct TinyModel {
  int64_t layers = 16;
  int64_t heads = 32, kv_heads = 8;
  int64_t experts = 0;
  int64_t output_row = 256;  // output.weight's row length; 0: tied (no output.weight)
  int64_t row = 256;         // every block matrix's row length
};

// A Llama-shaped GGUF with one-row matrices (cheap to quantize) and the metadata the rules read.
std::string write_model(const ScratchDir& dir, const TinyModel& s, const std::string& name = "model.gguf") {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  w.set("llama.block_count", gguf::Value::u32(static_cast<uint64_t>(s.layers)));
  w.set("llama.attention.head_count", gguf::Value::u32(static_cast<uint64_t>(s.heads)));
  w.set("llama.attention.head_count_kv", gguf::Value::u32(static_cast<uint64_t>(s.kv_heads)));
  if (s.experts > 0) w.set("llama.expert_count", gguf::Value::u32(static_cast<uint64_t>(s.experts)));
  uint64_t seed = 1;
  auto matrix = [&](const std::string& n, int64_t row) { w.add_array(n, random_array({1, row}, seed++, -1, 1, DType::f32)); };
  matrix("token_embd.weight", 256);
  if (s.output_row > 0) matrix("output.weight", s.output_row);
  w.add_array("output_norm.weight", random_array({256}, seed++, -1, 1, DType::f32));
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_down", "ffn_up"}) {
      matrix(b + t + ".weight", s.row);
    }
    w.add_array(b + "attn_norm.weight", random_array({256}, seed++, -1, 1, DType::f32));
  }
  const std::string path = dir.file(name);
  w.write(path);
  return path;
}

std::map<std::string, GgmlType> quantized_types(const ScratchDir& dir, const std::string& in, const std::string& type,
                                                bool llama_mix = false) {
  const std::string out = dir.file(type + ".out.gguf");
  gguf::quantize_file(in, out, gguf::options_for_type(type, llama_mix));
  std::map<std::string, GgmlType> types;
  const gguf::Reader reader = gguf::Reader::open(out);
  for (const gguf::TensorInfo& t : reader.tensors()) types[t.name] = t.type;
  return types;
}

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string blk(int64_t i, const char* t) { return "blk." + std::to_string(i) + "." + t + ".weight"; }

// llama.cpp's use_more_bits for 16 layers: i < 2, i >= 14, or (i - 2) % 3 == 2.
bool more_bits_16(int64_t i) { return i < 2 || i >= 14 || (i - 2) % 3 == 2; }

uint64_t file_type(const ScratchDir& dir, const std::string& type) {
  return gguf::Reader::open(dir.file(type + ".out.gguf")).get("general.file_type").as_u64();
}

}  // namespace

TEST(LlamaMix, KQuantMixesFollowLlamaQuantizeRules) {
  ScratchDir dir;
  const std::string in = write_model(dir, {});  // 16 layers, 4 query heads per KV head
  for (const char* mix : {"q4_k_m", "q5_k_m"}) {
    SCOPED_TRACE(mix);
    const GgmlType base = std::string(mix) == "q4_k_m" ? GgmlType::q4_k : GgmlType::q5_k;
    auto t = quantized_types(dir, in, mix);
    EXPECT_EQ(t["output.weight"], GgmlType::q6_k);
    EXPECT_EQ(t["token_embd.weight"], base);
    EXPECT_EQ(t["output_norm.weight"], GgmlType::f32);
    for (int64_t i = 0; i < 16; ++i) {
      const GgmlType more = more_bits_16(i) ? GgmlType::q6_k : base;
      EXPECT_EQ(t[blk(i, "attn_v")], more) << i;
      EXPECT_EQ(t[blk(i, "ffn_down")], more) << i;
      for (const char* other : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"}) {
        EXPECT_EQ(t[blk(i, other)], base) << i << " " << other;
      }
    }
  }
  auto m = quantized_types(dir, in, "q3_k_m");
  EXPECT_EQ(file_type(dir, "q3_k_m"), 12u);
  EXPECT_EQ(m["output.weight"], GgmlType::q6_k);
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(m[blk(i, "attn_v")], i < 2 ? GgmlType::q5_k : GgmlType::q4_k) << i;
    EXPECT_EQ(m[blk(i, "ffn_down")], i < 1 ? GgmlType::q5_k : GgmlType::q4_k) << i;  // n/16 = 1
    EXPECT_EQ(m[blk(i, "attn_output")], GgmlType::q4_k) << i;
    EXPECT_EQ(m[blk(i, "attn_q")], GgmlType::q3_k) << i;
    EXPECT_EQ(m[blk(i, "ffn_up")], GgmlType::q3_k) << i;
  }
  auto l = quantized_types(dir, in, "q3_k_l");
  EXPECT_EQ(file_type(dir, "q3_k_l"), 13u);
  for (int64_t i = 0; i < 16; ++i) {
    for (const char* t : {"attn_v", "ffn_down", "attn_output"}) EXPECT_EQ(l[blk(i, t)], GgmlType::q5_k) << i << t;
    EXPECT_EQ(l[blk(i, "attn_k")], GgmlType::q3_k) << i;
  }
  auto s = quantized_types(dir, in, "q3_k_s");
  EXPECT_EQ(file_type(dir, "q3_k_s"), 11u);
  EXPECT_EQ(s["output.weight"], GgmlType::q6_k);
  for (int64_t i = 0; i < 16; ++i) {
    for (const char* t : {"attn_v", "ffn_down", "attn_output", "attn_q"}) EXPECT_EQ(s[blk(i, t)], GgmlType::q3_k);
  }
  auto ks = quantized_types(dir, in, "q4_k_s");
  EXPECT_EQ(file_type(dir, "q4_k_s"), 14u);
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(ks[blk(i, "attn_v")], i < 4 ? GgmlType::q5_k : GgmlType::q4_k) << i;
    EXPECT_EQ(ks[blk(i, "ffn_down")], i < 2 ? GgmlType::q5_k : GgmlType::q4_k) << i;  // n/8 = 2
    EXPECT_EQ(ks[blk(i, "attn_output")], GgmlType::q4_k) << i;
  }
  auto k5 = quantized_types(dir, in, "q5_k_s");
  EXPECT_EQ(file_type(dir, "q5_k_s"), 16u);
  EXPECT_EQ(k5["output.weight"], GgmlType::q6_k);
  EXPECT_EQ(k5[blk(0, "attn_v")], GgmlType::q5_k);
  EXPECT_EQ(k5[blk(0, "ffn_down")], GgmlType::q5_k);
}

TEST(LlamaMix, Q2KDependsOnGroupedQueryAttention) {
  ScratchDir dir;
  const std::string gqa4 = write_model(dir, {}, "gqa4.gguf");
  auto a = quantized_types(dir, gqa4, "q2_k", /*llama_mix=*/true);
  EXPECT_EQ(file_type(dir, "q2_k"), 10u);
  EXPECT_EQ(a["output.weight"], GgmlType::q6_k);
  EXPECT_EQ(a["token_embd.weight"], GgmlType::q2_k);
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(a[blk(i, "attn_v")], GgmlType::q4_k) << i;  // 32 / 8 = 4 query heads per KV head
    EXPECT_EQ(a[blk(i, "ffn_down")], GgmlType::q3_k) << i;
    EXPECT_EQ(a[blk(i, "attn_output")], GgmlType::q3_k) << i;
    EXPECT_EQ(a[blk(i, "attn_q")], GgmlType::q2_k) << i;
  }
  const std::string mha = write_model(dir, {.kv_heads = 32}, "mha.gguf");
  auto b = quantized_types(dir, mha, "q2_k", true);
  EXPECT_EQ(b[blk(3, "attn_v")], GgmlType::q3_k);
  // Q2_K_S needs an importance matrix in llama-quantize, so quantize refuses it; its rules still hold.
  EXPECT_TESSERA_ERROR(gguf::options_for_type("q2_k_s"), "q2_k_s", "importance matrix");
  EXPECT_EQ(gguf::llama_mix_file_type("q2_k_s"), 21u);
  std::vector<gguf::MixTensor> tensors;
  for (int64_t i = 0; i < 16; ++i) {
    for (const char* t : {"attn_output", "attn_v", "ffn_down"}) tensors.push_back({blk(i, t), 256});
  }
  std::map<std::string, GgmlType> s;
  for (const auto& o : gguf::llama_mix_overrides("q2_k_s", {.n_layers = 16, .n_head = 32, .n_head_kv = 8}, tensors)) {
    s[o.pattern] = o.type;
  }
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(s[blk(i, "attn_v")], GgmlType::q4_k) << i;
    EXPECT_EQ(s.count(blk(i, "ffn_down")) ? s[blk(i, "ffn_down")] : GgmlType::q2_k, i < 2 ? GgmlType::q4_k : GgmlType::q2_k)
        << i;
    EXPECT_EQ(s.count(blk(i, "attn_output")), 0u) << i;  // stays Q2_K
  }
  std::map<std::string, GgmlType> mha_s;
  for (const auto& o : gguf::llama_mix_overrides("q2_k_s", {.n_layers = 16, .n_head = 32, .n_head_kv = 32}, tensors)) {
    mha_s[o.pattern] = o.type;
  }
  EXPECT_EQ(mha_s.count(blk(3, "attn_v")), 0u);  // one query head per KV head: no bump
}

TEST(LlamaMix, WholeFileTypesOnlyMoveTheOutputMatrix) {
  ScratchDir dir;
  const std::string in = write_model(dir, {.layers = 2});
  auto q6 = quantized_types(dir, in, "q6_k", true);
  for (const auto& [name, type] : q6) EXPECT_EQ(type, name.find("norm") != std::string::npos ? GgmlType::f32 : GgmlType::q6_k) << name;
  auto q40 = quantized_types(dir, in, "q4_0", true);
  EXPECT_EQ(q40["output.weight"], GgmlType::q6_k);
  EXPECT_EQ(q40[blk(1, "attn_v")], GgmlType::q4_0);
  EXPECT_EQ(q40[blk(1, "ffn_down")], GgmlType::q4_0);
  auto q80 = quantized_types(dir, in, "q8_0", true);
  EXPECT_EQ(q80["output.weight"], GgmlType::q8_0);
  // Without --llama-mix a plain name stays pure, as llama-quantize --pure.
  auto pure = quantized_types(dir, in, "q4_0");
  EXPECT_EQ(pure["output.weight"], GgmlType::q4_0);
  // llama-quantize's Q3_K, Q4_K and Q5_K name its _M mixes.
  auto q3 = quantized_types(dir, in, "q3_k", true);
  EXPECT_EQ(file_type(dir, "q3_k"), 12u);
  EXPECT_EQ(q3[blk(0, "attn_v")], GgmlType::q5_k);
}

TEST(LlamaMix, SeventyBAndEightExpertRules) {
  ScratchDir dir;
  // A Llama of 80 layers with grouped KV heads is llama.cpp's 70B: attn_v Q3_K/Q4_K become Q5_K.
  const std::string big = write_model(dir, {.layers = 80, .heads = 64, .kv_heads = 8}, "70b.gguf");
  auto m = quantized_types(dir, big, "q3_k_m");
  EXPECT_EQ(m[blk(10, "attn_v")], GgmlType::q5_k);
  EXPECT_EQ(m[blk(10, "ffn_down")], GgmlType::q4_k);
  const std::string moe = write_model(dir, {.layers = 4, .experts = 8}, "moe.gguf");
  auto e = quantized_types(dir, moe, "q4_k_m");
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(e[blk(i, "attn_v")], GgmlType::q8_0) << i;
    EXPECT_EQ(e[blk(i, "attn_k")], GgmlType::q8_0) << i;
    EXPECT_EQ(e[blk(i, "attn_output")], GgmlType::q5_k) << i;
  }
}

TEST(LlamaMix, TiedHeadAndRowsThatAreNotWholeSuperBlocks) {
  ScratchDir dir;
  // No output.weight: token_embd is the head and gets its type.
  auto tied = quantized_types(dir, write_model(dir, {.layers = 2, .output_row = 0}, "tied.gguf"), "q4_k_m");
  EXPECT_EQ(tied["token_embd.weight"], GgmlType::q6_k);
  // Rows of 96: the mix's choice falls back from the type it chose (Q6_K -> Q8_0, Q5_K -> Q5_1), the
  // base type from its own (Q4_K -> Q5_0, Q3_K -> Q4_0); output.weight gets Q8_0.
  const std::string odd = write_model(dir, {.layers = 2, .output_row = 96, .row = 96}, "odd.gguf");
  auto km = quantized_types(dir, odd, "q4_k_m");
  EXPECT_EQ(km["output.weight"], GgmlType::q8_0);
  EXPECT_EQ(km[blk(1, "attn_v")], GgmlType::q8_0);
  EXPECT_EQ(km[blk(0, "attn_v")], GgmlType::q5_0);
  EXPECT_EQ(km[blk(0, "attn_q")], GgmlType::q5_0);
  auto l = quantized_types(dir, odd, "q3_k_l");
  EXPECT_EQ(l[blk(0, "attn_v")], GgmlType::q5_1);
  EXPECT_EQ(l[blk(0, "attn_q")], GgmlType::q4_0);
  // Rows of 20 fit no block type: F16.
  auto tiny = quantized_types(dir, write_model(dir, {.layers = 2, .output_row = 20, .row = 20}, "20.gguf"), "q4_k_m");
  EXPECT_EQ(tiny["output.weight"], GgmlType::f16);
  EXPECT_EQ(tiny[blk(1, "attn_v")], GgmlType::f16);
}

TEST(LlamaMix, UnknownMixesNameTheChoices) {
  EXPECT_TESSERA_ERROR(gguf::options_for_type("q4_k_x"), "q4_k_x");
  EXPECT_TESSERA_ERROR(gguf::options_for_type("q7_k_m"), "q7_k_m", "q3_k_m");
  EXPECT_EQ(gguf::options_for_type("f16", true).mix, "");  // no rules without a block type
}

TEST(LlamaMix, Q4KMReproducesLlamaQuantizeByteForByte) {
  TESSERA_REQUIRE_TESTDATA(data);
  ScratchDir dir;
  const std::string f32 = (data / "gguf" / "tiny-llama-f32.gguf").string();
  for (auto [type, mix] : {std::pair{"q4_k_m", false}, std::pair{"q4_k", true}}) {
    SCOPED_TRACE(type);
    const std::string out = dir.file(std::string(type) + ".gguf");
    gguf::quantize_file(f32, out, gguf::options_for_type(type, mix));
    EXPECT_TRUE(file_bytes(out) == file_bytes(data / "gguf" / "tiny-llama-q4_k_m.gguf"));
  }
}

TEST(LlamaMix, TrainingCheckpointLosesItsOptimiserState) {
  ScratchDir dir;
  ops::Generator gen(0);
  auto model = models::mlp(gen, 256, 4);
  optim::Adam opt(*model, {.lr = 1e-3});
  const Tensor loss = ops::cross_entropy((*model)(Tensor::from_array(random_array({8, 256}, 3, 0, 1, DType::f32))),
                                         Tensor::from_vector<int64_t>({0, 1, 2, 3, 0, 1, 2, 3}, {8}));
  opt.zero_grad();
  loss.backward();
  opt.step();
  const std::string ckpt = dir.file("checkpoint.safetensors");
  train::save_checkpoint(ckpt, *model, &opt, {{"model", "mlp"}, {"epoch", "1"}});
  ASSERT_GT(io::load_safetensors(ckpt).size(), model->state_dict().size());  // the moments are there
  const auto plans = gguf::quantize_file(ckpt, dir.file("out.gguf"), gguf::options_for_type("q8_0"));
  size_t dropped = 0;
  for (const auto& p : plans) dropped += p.dropped;
  EXPECT_GT(dropped, 0u);
  const gguf::Reader r = gguf::Reader::open(dir.file("out.gguf"));
  EXPECT_EQ(r.tensors().size(), model->state_dict().size());
  for (const gguf::TensorInfo& t : r.tensors()) EXPECT_EQ(t.name.rfind("model.", 0), 0u) << t.name;
  for (const auto& [key, value] : r.metadata()) EXPECT_NE(key.rfind("optim.", 0), 0u) << key;
  EXPECT_EQ(r.tensor("model.1.weight").type, GgmlType::q8_0);
  EXPECT_EQ(r.get("model").as_string(), "mlp");
}

TEST(LlamaMix, QuantizeCliTakesTheMixesAndDropsOptimiserState) {
  const auto exe = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "tessera";
  if (!std::filesystem::exists(exe)) GTEST_SKIP() << "the tessera executable is not built next to this test";
  auto run = [&](const std::string& args) {
    std::string out;
    FILE* p = ::popen((exe.string() + " " + args + " 2>&1").c_str(), "r");
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    return std::pair{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  };
  ScratchDir dir;
  const std::string in = write_model(dir, {.layers = 2});
  auto [code, out] = run("quantize " + in + " " + dir.file("m.gguf") + " --type q3_k_l");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("chosen by the mix"), std::string::npos) << out;
  EXPECT_EQ(gguf::Reader::open(dir.file("m.gguf")).tensor(blk(0, "attn_v")).type, GgmlType::q5_k);
  std::tie(code, out) = run("quantize " + in + " " + dir.file("m.gguf") + " --type q2_k --llama-mix");
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(gguf::Reader::open(dir.file("m.gguf")).tensor(blk(0, "ffn_down")).type, GgmlType::q3_k);
  std::tie(code, out) = run("quantize " + in + " " + dir.file("m.gguf") + " --type q2_k --lama-mix");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("did you mean '--llama-mix'"), std::string::npos) << out;
  std::tie(code, out) = run("quantize " + in + " " + dir.file("m.gguf") + " --type q4_k_q");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("q4_k_q"), std::string::npos) << out;

  // A training checkpoint: the summary says what was dropped.
  ops::Generator gen(0);
  auto model = models::mlp(gen, 32, 2);
  optim::Adam opt(*model, {.lr = 1e-3});
  const Tensor loss = ops::cross_entropy((*model)(Tensor::from_array(random_array({2, 32}, 3, 0, 1, DType::f32))),
                                         Tensor::from_vector<int64_t>({0, 1}, {2}));
  opt.zero_grad();
  loss.backward();
  opt.step();
  train::save_checkpoint(dir.file("c.safetensors"), *model, &opt, {{"model", "mlp"}});
  std::tie(code, out) = run("quantize " + dir.file("c.safetensors") + " " + dir.file("c.gguf") + " --type q8_0 -q");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("dropped the optimiser state of the training checkpoint: 16 tensors"), std::string::npos) << out;
  EXPECT_NE(out.find(": 8 tensors"), std::string::npos) << out;
}
