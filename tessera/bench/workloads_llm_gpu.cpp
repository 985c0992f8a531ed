// LLM decode on a GPU backend (--backend cuda or vulkan): a random-weight model of the Llama-3.2-1B
// shape (dim 2048, 16 layers, 32 heads over 8 KV heads, FFN 8192, vocabulary 32000, tied), written once
// per weight type into a folder beside the kernel cache and reused, then run_llm_bench's greedy decode
// at batch 1 (a 16-token prompt, 64 steps, f16 KV cache): the tokens/s that issue 17 compares the
// backends at. The rates depend on the shapes and types, not on the weights' values. Run only when
// named (`tessera bench gpu_llama1b_decode_q4_0 --backend vulkan`): writing a model takes minutes.
#include <algorithm>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "tessera/backends/backend.h"
#include "tessera/backends/common/kernel_cache.h"
#include "tessera/bench/llm_bench.h"
#include "tessera/bench/workloads.h"
#include "tessera/core/error.h"
#include "tessera/models/llm/random_model.h"

namespace tessera::bench {

namespace {

constexpr int64_t kPromptTokens = 16, kDecodeTokens = 64;

// The 1B-shaped model of `type`, made on first use (a minute or so of quantizing on the host).
std::string llama1b_model(const std::string& type) {
  const std::filesystem::path dir = std::filesystem::path(backends::common::kernel_cache_dir()) / "bench-models";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / ("llama1b-" + type + ".gguf")).string();
  if (std::filesystem::exists(path)) return path;
  models::llm::RandomModelSpec s;
  s.arch = models::llm::Arch::llama;
  s.dim = 2048;
  s.layers = 16;
  s.heads = 32;
  s.kv_heads = 8;
  s.ffn = 8192;
  s.vocab = 32000;
  s.ctx = 4096;
  s.tied = true;
  s.seed = 1;
  s.type = type;
  s.name = "llama1b-shape";
  models::llm::write_random_model(s, path);
  return path;
}

Measurement llama1b_decode(const std::string& name, const std::string& type, const BenchOptions& o) {
  backends::Backend& b = o.backend.empty() ? backends::default_backend() : backends::backend_by_name(o.backend);
  TESSERA_CHECK(!b.device().is_host(), "bench: {} is sized for a GPU; run it with --backend cuda or vulkan", name);
  LlmBenchOptions lo;
  lo.model = llama1b_model(type);
  lo.backend = b.name();
  lo.prompt_tokens = kPromptTokens;
  lo.gen_tokens = kDecodeTokens;
  lo.cache_f16 = true;
  lo.repetitions = o.repeat;
  const LlmBenchResult r = run_llm_bench(lo);
  Measurement m;
  m.name = name;
  m.unit = "tokens/s";
  m.median = r.decode_median;
  m.min = *std::min_element(r.decode_tokens_per_s.begin(), r.decode_tokens_per_s.end());
  m.max = *std::max_element(r.decode_tokens_per_s.begin(), r.decode_tokens_per_s.end());
  m.runs = static_cast<int>(r.decode_tokens_per_s.size());
  m.detail = fmt::format("Llama-1B shape, {} weights, {} greedy steps after a {}-token prompt, f16 cache, backend {}; "
                         "prefill {:.0f} tokens/s, decode graph compiled in {:.2f} s",
                         type, kDecodeTokens, kPromptTokens, b.name(), r.prefill_median, r.decode_compile_s);
  return m;
}

}  // namespace

std::vector<Workload> gpu_llm_workloads() {
  std::vector<Workload> list;
  for (const char* type : {"q4_0", "q8_0", "q4_k_m", "bf16"}) {
    const std::string name = fmt::format("gpu_llama1b_decode_{}", type);
    list.push_back({name, fmt::format("Llama-1B-shaped decode at batch 1, {} weights, tokens/s (GPU)", type),
                    [name, t = std::string(type)](const BenchOptions& o) { return llama1b_decode(name, t, o); }, true,
                    /*on_request=*/true});
  }
  return list;
}

}  // namespace tessera::bench
