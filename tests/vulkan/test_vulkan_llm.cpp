// LLM inference on the Vulkan backend, on the tiny llama.cpp models of ../shared/testdata: the decode
// graph compiles into one Vulkan executable (block products, the cache update, attention over the
// cache) whose KV cache outputs are written over their inputs in device memory, and a prompt chunk
// (decoded-weight products) then single-token steps (matvecs) give the CPU backend's logits within a
// per-type tolerance and its greedy tokens, and the reference backend's more tightly.
#include <gtest/gtest.h>

#include "gguf/gguf_test_util.h"
#include "llm/parity_util.h"
#include "tessera/backends/common/program.h"
#include "tessera/models/llm/kv_cache.h"
#include "tessera/models/llm/llm_model.h"
#include "vulkan/vulkan_test_util.h"

namespace tessera::test {
namespace {

using models::llm::Decoder;
using models::llm::LlmModel;

LlmModel load_tiny(const std::filesystem::path& data, const std::string& name) {
  return LlmModel::load((data / "gguf" / (name + ".gguf")).string(),
                        models::llm::LoadOptions::for_device(vulkan_under_test().device()));
}

TEST(VulkanLlm, DecodeGraphRunsWholeOnVulkanWithTheCacheWrittenInPlace) {
  TESSERA_REQUIRE_TESTDATA(data);
  for (const char* name : {"tiny-llama-q4_k_m", "tiny-gpt2-q8_0"}) {
    const LlmModel model = load_tiny(data, name);
    for (DType cache : {DType::f32, DType::f16}) {
      SCOPED_TRACE(std::string(name) + ", " + dtype_name(cache) + " cache");
      const auto d = models::llm::decode_graph(model, 1, 32, true, cache);
      const auto exe = vulkan_under_test().compile(d.graph, backends::CompileSpec{d.aliases});
      const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
      ASSERT_NE(vk, nullptr) << "the decode graph was split; ops without a Vulkan route:" << vulkan_missing_ops(d.graph);
      for (const backends::Alias& a : d.aliases) {
        EXPECT_TRUE(backends::common::can_write_over_input(vk->program(), a.input, a.output))
            << "cache output " << a.output << " is staged and copied back instead of written over input " << a.input;
      }
    }
  }
}

// Logits of the prompt's first `chunk` tokens in one step, then of each later token alone, stacked.
Array decode(const LlmModel& model, backends::Backend& backend, const std::vector<int64_t>& ids, size_t chunk,
             DType cache) {
  Decoder decoder(model, backend, 32, cache);
  const int64_t v = model.config().n_vocab;
  Array out = Array::empty(DType::f32, {static_cast<int64_t>(ids.size()), v});
  const Array first = decoder.step({ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(chunk)});
  std::copy(first.data<const float>(), first.data<const float>() + chunk * v, out.data<float>());
  for (size_t i = chunk; i < ids.size(); ++i) {
    const Array row = decoder.step({ids[i]});
    std::copy(row.data<const float>(), row.data<const float>() + v, out.data<float>() + i * v);
  }
  return out;
}

// The CPU backend's quantized products round the activations to 8-bit blocks (as llama.cpp does), the
// Vulkan shaders do not: on block types their logits differ by up to a tenth or so, within the
// thresholds the test data's README sets against llama.cpp (parity_util.h). The reference backend
// multiplies exactly, as the shaders do in f32, and must agree closely with every type.
TEST(VulkanLlm, TinyModelsGiveTheCpuLogitsAndGreedyTokens) {
  TESSERA_REQUIRE_TESTDATA(data);
  // q2_k and q3_k have no shader: their products run on the CPU, the rest of the graph on Vulkan.
  const char* types[] = {"f32",  "f16",  "bf16", "q4_0", "q4_1",   "q5_0", "q5_1",
                         "q8_0", "q4_k", "q5_k", "q6_k", "q4_k_m", "q2_k", "q3_k"};
  std::vector<std::pair<std::string, std::string>> models;  // file name, weight type
  for (const char* t : types) models.emplace_back(std::string("tiny-llama-") + t, t);
  models.emplace_back("tiny-gpt2-f32", "f32");
  models.emplace_back("tiny-gpt2-q8_0", "q8_0");
  for (const auto& [name, type] : models) {
    const LlmModel model = load_tiny(data, name);
    std::vector<int64_t> ids =
        read_json(data / "logits" / (name + ".tokens.json"))["token_ids"].get<std::vector<int64_t>>();
    ids.resize(std::min<size_t>(ids.size(), 14));
    ASSERT_GT(ids.size(), 10u);
    const int64_t v = model.config().n_vocab;
    const bool block_type = type.front() == 'q';
    const double cpu_tol = block_type ? thresholds_for(type).max_abs : 2e-3;
    for (DType cache : {DType::f32, DType::f16}) {
      SCOPED_TRACE(name + ", " + dtype_name(cache) + " cache");
      // 10 prompt tokens: longer than a matvec takes, so the decoded-weight products run too.
      const Array got = decode(model, vulkan_under_test(), ids, 10, cache);
      const Array cpu = decode(model, backends::backend_by_name("cpu"), ids, 10, cache);
      const Array exact = decode(model, backends::reference_backend(), ids, 10, cache);
      EXPECT_LT(compare_rows(got, cpu).max_abs, cpu_tol);
      EXPECT_LT(compare_rows(got, exact).max_abs, 2e-3);
      for (size_t i = 0; i < ids.size(); ++i) {
        const float* g = got.data<const float>() + i * v;
        const float* c = cpu.data<const float>() + i * v;
        double row_diff = 0;
        for (int64_t j = 0; j < v; ++j) row_diff = std::max(row_diff, std::abs(static_cast<double>(g[j]) - c[j]));
        // Only a CPU near-tie closer than the two rows differ can flip the greedy token.
        const Top2 want = top2(c, v);
        if (want.margin <= 2 * row_diff) continue;
        EXPECT_EQ(top2(g, v).best, want.best) << "greedy token at position " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::test
