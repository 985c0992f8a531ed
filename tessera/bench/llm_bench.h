#pragma once
// Prefill and decode rates of a GGUF language model, measured as llama-bench does: a prompt of p
// tokens in one batch, then n greedy one-token steps (n forward passes, the first token taken from the
// prompt's logits), each repetition from an empty cache after one untimed warm-up; medians reported.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::bench {

struct LlmBenchOptions {
  std::string model;           // GGUF file
  std::string backend = "cpu";
  int64_t prompt_tokens = 128;  // p
  int64_t gen_tokens = 32;      // n
  int64_t ctx = 0;              // cache rows (0: p + n)
  bool cache_f16 = false;       // the KV cache in f16 (llama.cpp's default) instead of f32
  int repetitions = 5;
};

struct LlmBenchResult {
  std::vector<double> prefill_tokens_per_s, decode_tokens_per_s;  // one per repetition
  double prefill_median = 0, decode_median = 0;
  double load_s = 0;         // open, validate and map the file, set up the decoder
  double first_token_s = 0;  // from the start of loading to the warm-up prompt's logits (compiles included)
  double decode_compile_s = 0;  // the warm-up's first one-token step: compiling the decode graph, one run
  int64_t peak_rss_bytes = 0;
  int64_t file_bytes = 0;
};

// `on_progress(done, total)` (optional) after each repetition.
LlmBenchResult run_llm_bench(const LlmBenchOptions& options, const std::function<void(int, int)>& on_progress = {});

}  // namespace tessera::bench
