// tessera generate -m FILE.gguf -p PROMPT -n N: encodes the prompt with the file's tokenizer, runs it
// through the model's KV-cache decode graph in one batch (prefill), then samples N tokens one at a time,
// streaming their text, and ends with the prefill and decode rates. --tokens feeds exact ids (no BOS)
// and --dump-logits writes the logits of every fed position as float32 [n_tokens, n_vocab].
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <span>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command.h"
#include "usage_errors.h"
#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/io/npy.h"
#include "tessera/models/llm/kv_cache.h"
#include "tessera/models/llm/llm_model.h"
#include "tessera/models/sampling/sampler.h"
#include "tessera/tokenizers/tokenizer.h"

namespace tessera::cli {

namespace {

struct GenerateCliOptions {
  std::string model, prompt, tokens, dump_logits, device;
  int64_t n = 128;
  int64_t ctx = 0;
  int threads = 0;
  std::string cache_type = "f32";
  models::sampling::SamplingParams sampling;
  bool json = false;
};

// "1,2,3" -> ids; throws naming the entry that is not a number.
std::vector<int64_t> parse_ids(const std::string& list) {
  std::vector<int64_t> ids;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TESSERA_CHECK(used == item.size() && !item.empty(), "--tokens: '{}' is not a token id (expected e.g. 1,2,3)", item);
    ids.push_back(v);
  }
  return ids;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The last row of logits [n, n_vocab] as floats on the host.
std::vector<float> last_row(const Array& logits) {
  const Array host = logits.to(host_device()).astype(DType::f32).contiguous();
  const int64_t v = host.shape().back(), rows = host.numel() / v;
  const float* p = host.data<float>() + (rows - 1) * v;
  return std::vector<float>(p, p + v);
}

int run_generate(const GenerateCliOptions& o) {
  if (o.tokens.empty() && o.prompt.empty()) {
    std::cerr << "tessera generate: error: give a prompt (-p TEXT) or token ids (--tokens 1,2,3)\n";
    return kExitUsage;
  }
  try {
    o.sampling.validate();
  } catch (const Error& e) {
    std::cerr << "tessera generate: error: " << e.what() << "\n";
    return kExitUsage;
  }
  backends::Backend& backend = o.device.empty() ? backends::default_backend() : backends::backend_by_name(o.device);
  const models::llm::LlmModel model =
      models::llm::LlmModel::load(o.model, models::llm::LoadOptions::for_device(backend.device()));
  const tokenizers::Tokenizer tok = tokenizers::Tokenizer::from_gguf(model.file());
  std::vector<int64_t> prompt;
  try {  // ids that are no numbers, past the vocabulary or the context: the command line is wrong
    if (!o.tokens.empty()) {
      prompt = parse_ids(o.tokens);
    } else {
      for (const auto id : tok.encode(o.prompt)) prompt.push_back(id);
    }
    model.check_tokens(prompt);
  } catch (const Error& e) {
    std::cerr << "tessera generate: error: " << e.what() << "\n";
    return kExitUsage;
  }
  const int64_t model_ctx = model.config().n_ctx;
  if (o.ctx > model_ctx) {
    std::cerr << fmt::format("tessera generate: error: --ctx {} is longer than the model's context of {} tokens\n",
                             o.ctx, model_ctx);
    return kExitUsage;
  }
  const int64_t ctx = o.ctx > 0 ? o.ctx : model_ctx;
  if (static_cast<int64_t>(prompt.size()) + o.n > ctx) {
    std::cerr << fmt::format("tessera generate: error: -n {} after a {}-token prompt passes the {} of {} tokens\n",
                             o.n, prompt.size(), o.ctx > 0 ? "context (--ctx)" : "model's context", ctx);
    return kExitUsage;
  }
  models::llm::Decoder decoder(model, backend, ctx, o.cache_type == "f16" ? DType::f16 : DType::f32);

  const auto t0 = std::chrono::steady_clock::now();
  const Array logits = decoder.step(prompt, /*last_row_only=*/o.dump_logits.empty());
  std::vector<float> row = last_row(logits);
  const double prefill_s = seconds_since(t0);
  if (!o.dump_logits.empty()) io::save_npy(o.dump_logits, logits.to(host_device()).astype(DType::f32));

  models::sampling::Sampler sampler(o.sampling);
  for (const int64_t id : prompt) sampler.accept(static_cast<int32_t>(id));
  std::vector<int32_t> generated;
  const auto t1 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < o.n; ++i) {
    const int32_t next = sampler.sample(std::span<const float>(row));
    sampler.accept(next);
    generated.push_back(next);
    if (!o.json) std::cout << tok.piece(next, /*render_special=*/false) << std::flush;
    if (next == tok.eos()) break;
    if (i + 1 < o.n) row = last_row(decoder.step({next}));
  }
  const double decode_s = seconds_since(t1);
  const double prefill_rate = prefill_s > 0 ? static_cast<double>(prompt.size()) / prefill_s : 0.0;
  const double decode_rate = decode_s > 0 ? static_cast<double>(generated.size()) / decode_s : 0.0;
  if (o.json) {
    const nlohmann::json out{{"prompt_tokens", prompt},
                             {"tokens", generated},
                             {"text", tok.decode(generated)},
                             {"prefill_tokens_per_s", prefill_rate},
                             {"decode_tokens_per_s", decode_rate},
                             {"backend", backend.name()}};
    // Random-weight models write any bytes: invalid UTF-8 shows as U+FFFD rather than failing.
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << fmt::format("\nprefill: {} tokens, {:.1f} tokens/s; decode: {} tokens, {:.1f} tokens/s ({})\n",
                             prompt.size(), prefill_rate, generated.size(), decode_rate, backend.name());
  }
  return kExitOk;
}

}  // namespace

Command add_generate_command(CLI::App& root) {
  auto o = std::make_shared<GenerateCliOptions>();
  CLI::App* app = root.add_subcommand("generate", "Generate text with a Llama-family or GPT-2 GGUF model");
  app->add_option("-m,--model", o->model, "GGUF model file")->required()->check(CLI::ExistingFile);
  app->add_option("-p,--prompt", o->prompt, "The prompt (UTF-8; BOS added where the vocabulary asks for it)");
  app->add_option("--tokens", o->tokens, "Feed exactly these token ids instead of a prompt (no BOS), e.g. 1,2,3");
  app->add_option("-n,--n-predict", o->n, "Tokens to generate (stops early at EOS)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  app->add_option("--temp", o->sampling.temperature, "Sampling temperature (0: greedy)")->capture_default_str();
  app->add_option("--top-k", o->sampling.top_k, "Keep the k most likely tokens (0: off)")->capture_default_str();
  app->add_option("--top-p", o->sampling.top_p, "Keep the smallest set reaching this probability (1: off)")
      ->capture_default_str();
  app->add_option("--min-p", o->sampling.min_p, "Drop tokens below min-p times the best one's probability (0: off)")
      ->capture_default_str();
  app->add_option("--repeat-penalty", o->sampling.repeat_penalty, "Penalty for recently seen tokens (1: off)")
      ->capture_default_str();
  app->add_option("--repeat-last-n", o->sampling.repeat_last_n, "How many recent tokens the penalty looks at")
      ->capture_default_str();
  app->add_option("--seed", o->sampling.seed, "Sampling seed")->capture_default_str();
  app->add_option("--backend,--device", o->device, "Backend (default: cpu)");
  app->add_option("-c,--ctx", o->ctx, "KV-cache positions (default: the model's context length)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  add_threads_option(*app, o->threads);
  app->add_option("--cache-type", o->cache_type, "KV-cache dtype (llama.cpp's default is f16)")
      ->check(CLI::IsMember({"f32", "f16"}))
      ->capture_default_str();
  app->add_option("--dump-logits", o->dump_logits, "Write the logits of every fed position as float32 .npy")
      ->check(output_file());
  app->add_flag("--json", o->json, "Print one JSON object at the end instead of streaming text");
  return {app, [o] { return run_generate(*o); }};
}

}  // namespace tessera::cli
