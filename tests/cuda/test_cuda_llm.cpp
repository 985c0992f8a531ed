// LLM inference on the CUDA backend: the decode graph runs whole on the GPU (no CPU split), its KV cache
// stays in device memory and is written in place, the steady state replays one CUDA graph, and the
// logits of a long prompt chunk (tensor-core products) and of single-token steps (matvec kernels)
// match the reference backend's whole-sequence forward on random-weight models of every weight type.
#include <gtest/gtest.h>

#include <filesystem>

#include "cuda/cuda_test_util.h"
#include "llm/parity_util.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/core/temp_file.h"
#include "tessera/models/llm/kv_cache.h"
#include "tessera/models/llm/llm_model.h"
#include "tessera/models/llm/prefill.h"
#include "tessera/models/llm/random_model.h"

namespace tessera::test {
namespace {

using models::llm::Arch;
using models::llm::Decoder;
using models::llm::LlmModel;
using models::llm::Prefill;
using models::llm::RandomModelSpec;

struct TempModels {
  std::string dir = create_temp_directory(std::filesystem::temp_directory_path() / "tessera-cuda-llm");
  ~TempModels() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string write(const RandomModelSpec& spec, const std::string& name) const {
    const std::string path = dir + "/" + name + ".gguf";
    models::llm::write_random_model(spec, path);
    return path;
  }
};

RandomModelSpec small_spec(Arch arch, const std::string& type) {
  RandomModelSpec s;
  s.arch = arch;
  s.dim = 256;  // K-quant rows hold multiples of 256 values
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = arch == Arch::llama ? 2 : 4;
  s.ffn = 512;
  s.vocab = 999;  // not a multiple of 32: a partly filled last block of lm_head rows
  s.ctx = 128;
  s.tied = arch == Arch::llama && type != "f16";
  s.seed = 5;
  s.type = type;
  return s;
}

std::vector<int64_t> prompt(int64_t n, int64_t vocab) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % vocab);
  return ids;
}

TEST(CudaLlm, DecodeGraphRunsWholeOnTheGpu) {
  const TempModels tmp;
  const LlmModel model = LlmModel::load(tmp.write(small_spec(Arch::llama, "q4_0"), "llama-q4_0"));
  for (DType cache : {DType::f32, DType::f16}) {
    const auto d = models::llm::decode_graph(model, 1, 64, true, cache);
    std::string missing;
    for (const ir::NodePtr& n : d.graph.nodes()) {
      if (!cuda().supports(*n)) missing += " " + n->op_name() + " " + ir::type_str(n->output_types()[0]);
    }
    const auto exe = cuda().compile(d.graph, backends::CompileSpec{d.aliases});
    EXPECT_NE(dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get()), nullptr)
        << "the decode graph was split: part of it runs on the CPU; without a CUDA lowering:" << missing;
  }
}

// The CUDA decoder's logits for a 44-token prompt, 40 tokens in one step (tensor-core products), then
// one at a time (matvec) — the second and later single steps replay the captured CUDA graph — against
// the reference backend's whole-sequence forward, for both cache types.
void expect_decoder_matches_reference(const LlmModel& model, const std::string& type) {
  const int64_t vocab = model.config().n_vocab;
  const std::vector<int64_t> ids = prompt(44, vocab);
  const Array want = Prefill(model, backends::reference_backend()).logits(ids);
  for (DType cache : {DType::f32, DType::f16}) {
    Decoder decoder(model, cuda(), 64, cache);
    Array first = decoder.step({ids.begin(), ids.begin() + 40});
    double prompt_err = compare_rows(want, first).max_abs;
    double step_err = 0;
    for (size_t i = 40; i < ids.size(); ++i) {
      const Array row = decoder.step({ids[i]});
      const float* got = row.data<const float>();
      const float* ref = want.data<const float>() + static_cast<int64_t>(i) * vocab;
      for (int64_t j = 0; j < vocab; ++j) step_err = std::max(step_err, std::abs(static_cast<double>(got[j]) - ref[j]));
    }
    // Long products round activations to f16 (bf16 beside bf16 weights); an f16 cache rounds keys and values.
    const double prompt_tol = type == "bf16" ? 0.15 : 0.04;
    // The cached rows of the prompt carry its rounding into every later step.
    const double step_tol = cache == DType::f16 ? 0.02 : type == "bf16" ? 0.05 : 6e-3;
    EXPECT_LT(prompt_err, prompt_tol) << "prompt rows, cache " << dtype_name(cache);
    EXPECT_LT(step_err, step_tol) << "single-token steps, cache " << dtype_name(cache);
  }
}

struct Case {
  Arch arch;
  const char* type;
  std::string name() const { return std::string(arch == Arch::llama ? "llama-" : "gpt2-") + type; }
};

TEST(CudaLlm, LogitsMatchTheReferenceForEveryWeightType) {
  const TempModels tmp;
  for (const Case& c : {Case{Arch::llama, "q4_0"}, Case{Arch::llama, "q8_0"}, Case{Arch::llama, "q4_k_m"},
                        Case{Arch::llama, "f16"}, Case{Arch::llama, "bf16"}, Case{Arch::gpt2, "f16"},
                        Case{Arch::gpt2, "q8_0"}}) {
    SCOPED_TRACE(c.name());
    expect_decoder_matches_reference(LlmModel::load(tmp.write(small_spec(c.arch, c.type), c.name())), c.type);
  }
}

TEST(CudaLlm, LogitsMatchTheReferenceWithTheDecodeFoldsOn) {
  // The folds not yet on by default: cache writes inside the attention, GELU in the products' store,
  // row kernels over a decode step's few long rows.
  const ScopedEnv fold("TESSERA_CUDA_FOLD_CACHE_WRITES", "1");
  const ScopedEnv activations("TESSERA_CUDA_PRODUCT_ACTIVATIONS", "1");
  const ScopedEnv rows("TESSERA_CUDA_ROW_KERNELS", "few");
  const TempModels tmp;
  for (const Case& c : {Case{Arch::llama, "q8_0"}, Case{Arch::gpt2, "f16"}, Case{Arch::gpt2, "bf16"}}) {
    SCOPED_TRACE(c.name());
    expect_decoder_matches_reference(LlmModel::load(tmp.write(small_spec(c.arch, c.type), c.name())), c.type);
  }
}

}  // namespace
}  // namespace tessera::test
