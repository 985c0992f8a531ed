// tessera quantize / tessera inspect on GGUF and safetensors inputs, through the library function and
// through the built executable (found next to this test binary).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "gguf_test_util.h"
#include "io/io_test_util.h"
#include "tessera/core/temp_file.h"
#include "tessera/io/gguf/quantize_file.h"
#include "tessera/io/npy.h"
#include "tessera/io/safetensors.h"
#include "tessera/quant/quantize.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
namespace gguf = tessera::io::gguf;
using quant::GgmlType;

namespace {

struct CliRun {
  int code = -1;
  std::string out;
};

// Runs the tessera executable with `args` (already shell-quoted), capturing stdout and stderr.
CliRun run_cli(const std::string& args) {
  const auto exe = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "tessera";
  CliRun r;
  FILE* p = ::popen((exe.string() + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool cli_built() {
  return std::filesystem::exists(std::filesystem::read_symlink("/proc/self/exe").parent_path() / "tessera");
}

// A small HF-style checkpoint: 2-D weights, 1-D norms and biases, a row length that is not a multiple
// of 256, and an odd one that is not a multiple of 32.
StateDict small_checkpoint() {
  auto rnd = [](Shape shape, uint64_t seed) { return random_array(shape, seed, -0.5, 0.5, DType::f32); };
  return {{"model.embed_tokens.weight", rnd({16, 256}, 1)},
          {"model.layers.0.mlp.down_proj.weight", rnd({8, 96}, 2)},
          {"model.layers.0.self_attn.q_proj.weight", rnd({4, 512}, 3).astype(DType::bf16)},
          {"model.layers.0.input_layernorm.weight", rnd({256}, 4)},
          {"model.layers.0.odd.weight", rnd({2, 20}, 5)},
          {"lm_head.bias", rnd({16}, 6)}};
}

}  // namespace

TEST(QuantizeFile, PlanFollowsLlamaQuantizeRules) {
  gguf::QuantizeOptions o;
  o.type = GgmlType::q4_k;
  EXPECT_EQ(gguf::plan_tensor("blk.0.attn_q.weight", {256, 256}, GgmlType::f32, o).to, GgmlType::q4_k);
  EXPECT_EQ(gguf::plan_tensor("blk.0.attn_norm.weight", {256}, GgmlType::f32, o).to, GgmlType::f32);
  EXPECT_EQ(gguf::plan_tensor("blk.0.attn_q.bias", {256, 2}, GgmlType::f32, o).to, GgmlType::f32);
  EXPECT_EQ(gguf::plan_tensor("position_embd.weight", {256, 256}, GgmlType::f32, o).to, GgmlType::f32);
  EXPECT_EQ(gguf::plan_tensor("blk.0.ffn_gate_inp.weight", {256, 8}, GgmlType::f32, o).to, GgmlType::f32);
  // Fallbacks for rows that are not whole super-blocks.
  const gguf::TensorPlan fb = gguf::plan_tensor("blk.0.ffn_down.weight", {96, 8}, GgmlType::f32, o);
  EXPECT_EQ(fb.to, GgmlType::q5_0);
  EXPECT_NE(fb.reason.find("not a multiple"), std::string::npos);
  EXPECT_EQ(gguf::plan_tensor("x.weight", {20, 2}, GgmlType::f32, o).to, GgmlType::f16);
  o.type = GgmlType::q3_k;
  EXPECT_EQ(gguf::plan_tensor("x.weight", {96, 2}, GgmlType::f32, o).to, GgmlType::q4_0);
  o.type = GgmlType::q6_k;
  EXPECT_EQ(gguf::plan_tensor("x.weight", {96, 2}, GgmlType::f32, o).to, GgmlType::q8_0);
  // Quantized sources: copied when already in the target type, re-encoded only if requantizing is allowed.
  EXPECT_EQ(gguf::plan_tensor("x.weight", {256, 2}, GgmlType::q6_k, o).to, GgmlType::q6_k);
  EXPECT_EQ(gguf::plan_tensor("x.weight", {96, 2}, GgmlType::q8_0, o).to, GgmlType::q8_0);  // the fallback
  EXPECT_TESSERA_ERROR(gguf::plan_tensor("x.weight", {256, 2}, GgmlType::q8_0, o), "'x.weight'",
                       "already quantized as q8_0", "as q6_k", "--allow-requantize");
  EXPECT_EQ(gguf::plan_tensor("x.weight", {256, 2}, GgmlType::i32, o).to, GgmlType::i32);
  o.allow_requantize = true;
  EXPECT_EQ(gguf::plan_tensor("x.weight", {256, 2}, GgmlType::q8_0, o).to, GgmlType::q6_k);
  o.allow_requantize = false;
  // Overrides: whole-name globs or regexes, first match wins, checked against the row length.
  o.overrides = {gguf::TypeOverride::parse("output.weight=f16"), gguf::TypeOverride::parse("blk\\.[01]\\..*=q8_0"),
                 gguf::TypeOverride::parse("*norm*=bf16")};
  EXPECT_EQ(gguf::plan_tensor("output.weight", {256, 2}, GgmlType::f32, o).to, GgmlType::f16);
  EXPECT_EQ(gguf::plan_tensor("blk.0.attn_output.weight", {256, 2}, GgmlType::f32, o).to, GgmlType::q8_0);
  EXPECT_EQ(gguf::plan_tensor("blk.2.attn_output.weight", {256, 2}, GgmlType::f32, o).to, GgmlType::q6_k);
  EXPECT_EQ(gguf::plan_tensor("blk.2.attn_norm.weight", {256}, GgmlType::f32, o).to, GgmlType::bf16);
  EXPECT_TESSERA_ERROR(gguf::plan_tensor("blk.0.x", {20}, GgmlType::f32, o), "'blk.0.x'", "q8_0", "20 values");
  EXPECT_TESSERA_ERROR(gguf::TypeOverride::parse("no_type"), "PATTERN=TYPE");
  EXPECT_TESSERA_ERROR(gguf::TypeOverride::parse("x=q9"), "unknown tensor type 'q9'");
  EXPECT_TESSERA_ERROR(gguf::TypeOverride::parse("x=q8_k"), "not a weight type");
  EXPECT_EQ(gguf::llama_file_type(GgmlType::q4_k), 15u);
  EXPECT_TESSERA_ERROR(gguf::llama_file_type(GgmlType::q8_k), "q8_k");
}

TEST(QuantizeFile, FromSafetensors) {
  ScratchDir dir;
  const auto tensors = small_checkpoint();
  io::save_safetensors(dir.file("in.safetensors"), tensors, {{"format", "pt"}});
  gguf::QuantizeOptions o;
  o.type = GgmlType::q4_k;
  const auto plans = gguf::quantize_file(dir.file("in.safetensors"), dir.file("out.gguf"), o);
  ASSERT_EQ(plans.size(), tensors.size());
  const gguf::Reader r = gguf::Reader::open(dir.file("out.gguf"));
  EXPECT_EQ(r.get("format").as_string(), "pt");
  EXPECT_EQ(r.get("general.file_type").as_u64(), 15u);
  EXPECT_EQ(r.get("general.quantization_version").as_u64(), 2u);
  EXPECT_EQ(r.tensor("model.embed_tokens.weight").type, GgmlType::q4_k);
  EXPECT_EQ(r.tensor("model.layers.0.mlp.down_proj.weight").type, GgmlType::q5_0);
  EXPECT_EQ(r.tensor("model.layers.0.self_attn.q_proj.weight").type, GgmlType::q4_k);
  EXPECT_EQ(r.tensor("model.layers.0.input_layernorm.weight").type, GgmlType::f32);
  EXPECT_EQ(r.tensor("model.layers.0.odd.weight").type, GgmlType::f16);
  EXPECT_EQ(r.tensor("lm_head.bias").type, GgmlType::f32);
  // Values: quantizing the source directly gives the same bytes; shapes come back row-major.
  for (const auto& [name, array] : tensors) {
    const gguf::TensorInfo& t = r.tensor(name);
    EXPECT_EQ(shape_str(t.shape()), shape_str(array.shape())) << name;
    const Array f = array.astype(DType::f32);
    const std::vector<uint8_t> want = quant::quantize(t.type, f.data<float>(), t.num_rows(), t.row_length());
    EXPECT_EQ(std::memcmp(want.data(), r.tensor_data(t), want.size()), 0) << name;
  }
}

TEST(QuantizeFile, RejectsNonFiniteWeightsNamingTheTensor) {
  ScratchDir dir;
  Array w = Array::zeros(DType::f32, {2, 32});
  w.data<float>()[40] = std::numeric_limits<float>::infinity();
  io::save_safetensors(dir.file("in.safetensors"), {{"bad.weight", w}});
  gguf::QuantizeOptions o;
  o.type = GgmlType::q8_0;
  EXPECT_TESSERA_ERROR(gguf::quantize_file(dir.file("in.safetensors"), dir.file("out.gguf"), o), "'bad.weight'",
                       "row 1", "value 8", "inf");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.gguf")));
}

TEST(QuantizeCli, QuantizeInspectAndDump) {
  if (!cli_built()) GTEST_SKIP() << "the tessera executable is not built next to this test";
  ScratchDir dir;
  io::save_safetensors(dir.file("in.safetensors"), small_checkpoint());
  const std::string in = dir.file("in.safetensors"), out = dir.file("out.gguf");
  CliRun r = run_cli("quantize '" + in + "' '" + out + "' --type q8_0 --keep 'model.embed_tokens.weight=f16'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("model.embed_tokens.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("override"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_EQ(gguf::Reader::open(out).tensor("model.embed_tokens.weight").type, GgmlType::f16);

  r = run_cli("inspect '" + out + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("GGUF v3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("general.file_type"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f16 x2, f32 x2, q8_0 x2"), std::string::npos) << r.out;

  const std::string npy = dir.file("t.npy");
  r = run_cli("inspect '" + out + "' --tensor model.layers.0.self_attn.q_proj.weight --dump '" + npy + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("row-major shape [4, 512]"), std::string::npos) << r.out;
  const Array dumped = io::load_npy(npy);
  const gguf::Reader reader = gguf::Reader::open(out);
  expect_same_array(dumped, reader.dequantize("model.layers.0.self_attn.q_proj.weight"));
}

TEST(QuantizeCli, ErrorsAreOneLineWithExitCodes) {
  if (!cli_built()) GTEST_SKIP() << "the tessera executable is not built next to this test";
  ScratchDir dir;
  io::save_safetensors(dir.file("in.safetensors"), small_checkpoint());
  const std::string in = dir.file("in.safetensors");
  CliRun r = run_cli("quantize '" + in + "' '" + dir.file("o.gguf") + "' --type q9_9");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("unknown tensor type 'q9_9'"), std::string::npos) << r.out;
  r = run_cli("quantize '" + in + "' '" + dir.file("o.gguf") + "'");
  EXPECT_EQ(r.code, 2) << r.out;  // --type is required
  r = run_cli("inspect '" + in + "' --tensor x");  // safetensors are inspected too
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("no tensor named 'x'"), std::string::npos) << r.out;
  write_bytes(dir.file("notes.txt"), "not a model\n");
  r = run_cli("inspect '" + dir.file("notes.txt") + "' --tensor x");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("not a GGUF file"), std::string::npos) << r.out;
  write_bytes(dir.file("trunc.gguf"), std::string("GGUF\x03\x00\x00\x00\x01", 9));
  r = run_cli("inspect '" + dir.file("trunc.gguf") + "'");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("offset 8"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

namespace {

// The llama.cpp file type named by general.file_type, checked against the tensors actually written:
// the labelled type must be the requested one and some tensor must be in it, and every weight matrix
// must be in it, a documented fallback of it, or kept by the rules/overrides.
void expect_label_matches_tensors(const gguf::Reader& r, GgmlType requested) {
  ASSERT_NE(r.find("general.file_type"), nullptr);
  EXPECT_EQ(r.get("general.file_type").as_u64(), gguf::llama_file_type(requested));
  int in_type = 0;
  for (const gguf::TensorInfo& t : r.tensors()) in_type += t.type == requested;
  EXPECT_GT(in_type, 0) << "general.file_type says " << quant::type_name(requested) << " but no tensor has that type";
}

}  // namespace

TEST(QuantizeFile, RequantizingNeedsTheFlagAndTheLabelMatchesTheTensors) {
  // A Q4_K model quantized with --type q8_0 used to exit 0, re-encode nothing and still label the file
  // Q8_0 (general.file_type 7).
  ScratchDir dir;
  io::save_safetensors(dir.file("in.safetensors"), small_checkpoint());
  gguf::QuantizeOptions q4;
  q4.type = GgmlType::q4_k;
  gguf::quantize_file(dir.file("in.safetensors"), dir.file("q4.gguf"), q4);
  expect_label_matches_tensors(gguf::Reader::open(dir.file("q4.gguf")), GgmlType::q4_k);

  gguf::QuantizeOptions q8;
  q8.type = GgmlType::q8_0;
  EXPECT_TESSERA_ERROR(gguf::quantize_file(dir.file("q4.gguf"), dir.file("q8.gguf"), q8), dir.file("q4.gguf"),
                       "already quantized as q4_k", "as q8_0", "--allow-requantize");
  EXPECT_FALSE(std::filesystem::exists(dir.file("q8.gguf")));

  // Quantizing into the type the tensors already have copies them.
  const auto same = gguf::quantize_file(dir.file("q4.gguf"), dir.file("q4again.gguf"), q4);
  EXPECT_EQ(read_bytes(dir.file("q4again.gguf")), read_bytes(dir.file("q4.gguf")));
  for (const gguf::TensorPlan& p : same) EXPECT_EQ(p.from, p.to) << p.name;

  q8.allow_requantize = true;
  gguf::quantize_file(dir.file("q4.gguf"), dir.file("q8.gguf"), q8);
  const gguf::Reader r = gguf::Reader::open(dir.file("q8.gguf"));
  expect_label_matches_tensors(r, GgmlType::q8_0);
  const gguf::Reader src = gguf::Reader::open(dir.file("q4.gguf"));
  for (const gguf::TensorInfo& t : r.tensors()) {
    if (t.ne.size() < 2) continue;
    EXPECT_TRUE(t.type == GgmlType::q8_0 || t.type == GgmlType::f16) << t.name << " " << quant::type_name(t.type);
    // Re-encoded from the decoded Q4_K values.
    const Array decoded = src.dequantize(t.name);
    const std::vector<uint8_t> want = quant::quantize(t.type, decoded.data<const float>(), t.num_rows(), t.row_length());
    EXPECT_EQ(std::memcmp(want.data(), r.tensor_data(t), want.size()), 0) << t.name;
  }
}

TEST(QuantizeFile, TheLabelNamesWhatWasWrittenWhenNothingGetsTheRequestedType) {
  ScratchDir dir;
  auto rnd = [](Shape shape, uint64_t seed) { return random_array(shape, seed, -0.5, 0.5, DType::f32); };
  // Only norms and biases: nothing is quantized, so the file is all f32.
  io::save_safetensors(dir.file("norms.safetensors"), {{"a.norm.weight", rnd({8}, 1)}, {"b.bias", rnd({8}, 2)}});
  gguf::QuantizeOptions o;
  o.type = GgmlType::q4_k;
  gguf::quantize_file(dir.file("norms.safetensors"), dir.file("norms.gguf"), o);
  EXPECT_EQ(gguf::Reader::open(dir.file("norms.gguf")).get("general.file_type").as_u64(), 0u);  // LLAMA_FTYPE_ALL_F32
  // Every matrix overridden to f16.
  io::save_safetensors(dir.file("m.safetensors"), {{"w.weight", rnd({2, 256}, 3)}});
  o.overrides = {gguf::TypeOverride::parse("*=f16")};
  gguf::quantize_file(dir.file("m.safetensors"), dir.file("m.gguf"), o);
  EXPECT_EQ(gguf::Reader::open(dir.file("m.gguf")).get("general.file_type").as_u64(), 1u);  // MOSTLY_F16
}

TEST(QuantizeFile, PlantedSymlinkAtTheOldTemporaryNameIsNotFollowed) {
  ScratchDir dir;
  io::save_safetensors(dir.file("in.safetensors"), small_checkpoint());
  const std::string victim = dir.file("victim");
  write_bytes(victim, "precious");
  std::filesystem::create_symlink(victim, dir.file("out.gguf.tmp." + std::to_string(::getpid())));
  gguf::QuantizeOptions o;
  o.type = GgmlType::q8_0;
  gguf::quantize_file(dir.file("in.safetensors"), dir.file("out.gguf"), o);
  EXPECT_EQ(read_bytes(victim), "precious");
  EXPECT_EQ(gguf::Reader::open(dir.file("out.gguf")).tensors().size(), small_checkpoint().size());
}

TEST(QuantizeCli, RequantizingIsRefusedWithoutTheFlag) {
  if (!cli_built()) GTEST_SKIP() << "the tessera executable is not built next to this test";
  ScratchDir dir;
  io::save_safetensors(dir.file("in.safetensors"), small_checkpoint());
  const std::string in = dir.file("in.safetensors"), q4 = dir.file("q4.gguf"), q8 = dir.file("q8.gguf");
  ASSERT_EQ(run_cli("quantize -q '" + in + "' '" + q4 + "' --type q4_k").code, 0);
  CliRun r = run_cli("quantize '" + q4 + "' '" + q8 + "' --type q8_0");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("already quantized as q4_k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--allow-requantize"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(q8));
  r = run_cli("quantize '" + q4 + "' '" + q8 + "' --type q8_0 --allow-requantize");
  ASSERT_EQ(r.code, 0) << r.out;
  expect_label_matches_tensors(gguf::Reader::open(q8), GgmlType::q8_0);
  r = run_cli("quantize --help");
  EXPECT_NE(r.out.find("--allow-requantize"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compounds two rounding errors"), std::string::npos) << r.out;
}

TEST(QuantizeCli, ProgressLinesEscapeTensorNames) {
  if (!cli_built()) GTEST_SKIP() << "the tessera executable is not built next to this test";
  ScratchDir dir;
  gguf::Writer w;
  w.add_array("evil\x1b[2J\nforged.weight", Array::zeros(DType::f32, {2, 32}));
  w.write(dir.file("evil.gguf"));
  const CliRun r = run_cli("quantize '" + dir.file("evil.gguf") + "' '" + dir.file("out.gguf") + "' --type q8_0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("evil\\x1b[2J\\nforged.weight"), std::string::npos) << r.out;
  const CliRun inspect = run_cli("inspect '" + dir.file("out.gguf") + "'");
  ASSERT_EQ(inspect.code, 0) << inspect.out;
  EXPECT_EQ(inspect.out.find('\x1b'), std::string::npos) << inspect.out;
}
