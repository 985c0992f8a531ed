#include "tessera/bench/llm_bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/models/llm/kv_cache.h"
#include "tessera/models/llm/llm_model.h"
#include "tessera/tokenizers/tokenizer.h"

namespace tessera::bench {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int64_t argmax_last_row(const Array& logits) {
  const Array host = logits.to(host_device()).contiguous();
  const int64_t v = host.shape().back(), rows = host.numel() / v;
  const float* row = host.data<float>() + (rows - 1) * v;
  return std::max_element(row, row + v) - row;
}

constexpr const char* kText =
    "The old lighthouse keeper climbed the spiral stairs each evening, counting the steps as his father had, "
    "and lit the lamp that warned ships away from the rocks below the cliffs of the northern bay. ";

// The p prompt ids: BOS (when the vocabulary has one) then a fixed English text's tokens, repeated and
// cut to length, so both sides of a comparison see ordinary tokens.
std::vector<int64_t> prompt_for(const tokenizers::Tokenizer& tok, int64_t p) {
  std::vector<int64_t> ids;
  if (tok.vocab().bos != tokenizers::kNoToken) ids.push_back(tok.vocab().bos);
  tokenizers::EncodeOptions plain;
  plain.add_special = false;
  const std::vector<tokenizers::TokenId> text = tok.encode(kText, plain);
  TESSERA_CHECK(!text.empty(), "bench llm: the benchmark text encodes to no tokens");
  while (static_cast<int64_t>(ids.size()) < p) ids.insert(ids.end(), text.begin(), text.end());
  ids.resize(static_cast<size_t>(p));
  return ids;
}

}  // namespace

LlmBenchResult run_llm_bench(const LlmBenchOptions& o, const std::function<void(int, int)>& on_progress) {
  TESSERA_CHECK(o.prompt_tokens >= 1 && o.gen_tokens >= 0 && o.repetitions >= 1,
                "bench llm: needs at least one prompt token and one repetition (got -p {}, -n {}, {} repetitions)",
                o.prompt_tokens, o.gen_tokens, o.repetitions);
  LlmBenchResult r;
  r.file_bytes = static_cast<int64_t>(std::filesystem::file_size(o.model));
  const auto t0 = Clock::now();
  backends::Backend& backend = backends::backend_by_name(o.backend);
  const models::llm::LlmModel model =
      models::llm::LlmModel::load(o.model, models::llm::LoadOptions::for_device(backend.device()));
  const std::vector<int64_t> prompt = prompt_for(tokenizers::Tokenizer::from_gguf(model.file()), o.prompt_tokens);
  const int64_t ctx = o.ctx > 0 ? o.ctx : o.prompt_tokens + o.gen_tokens;
  TESSERA_CHECK(o.prompt_tokens + o.gen_tokens <= ctx,
                "bench llm: -p {} plus -n {} tokens do not fit a context of {}", o.prompt_tokens, o.gen_tokens, ctx);
  models::llm::Decoder decoder(model, backend, ctx, o.cache_f16 ? DType::f16 : DType::f32);
  r.load_s = since(t0);

  // One run: the prompt in one batch, then n greedy steps. The warm-up (run -1) compiles both graphs.
  for (int rep = -1; rep < o.repetitions; ++rep) {
    decoder.reset();
    const auto tp = Clock::now();
    int64_t next = argmax_last_row(decoder.step(prompt, /*last_row_only=*/true));
    const double prefill_s = since(tp);
    if (rep < 0) r.first_token_s = since(t0);
    const auto td = Clock::now();
    for (int64_t i = 0; i < o.gen_tokens; ++i) {
      next = argmax_last_row(decoder.step({next}));
      if (rep < 0 && i == 0) r.decode_compile_s = since(td);
    }
    const double decode_s = since(td);
    if (rep < 0) continue;
    r.prefill_tokens_per_s.push_back(static_cast<double>(o.prompt_tokens) / prefill_s);
    r.decode_tokens_per_s.push_back(decode_s > 0 ? static_cast<double>(o.gen_tokens) / decode_s : 0.0);
    if (on_progress) on_progress(rep + 1, o.repetitions);
  }
  r.prefill_median = median(r.prefill_tokens_per_s);
  r.decode_median = median(r.decode_tokens_per_s);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  r.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return r;
}

}  // namespace tessera::bench
