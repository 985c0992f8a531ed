// tessera bench llm -m FILE.gguf -p 128 -n 32 --threads 2: prefill and decode tokens/s of a GGUF model
// as llama-bench reports them (bench/llm_bench.h); --json ends with one JSON object for
// bench/compare_llamacpp.py, which runs llama.cpp on the same file and prints the ratios.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "command.h"
#include "tessera/backends/backend.h"
#include "tessera/bench/llm_bench.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::cli {

namespace {

struct BenchLlmCli {
  bench::LlmBenchOptions options;
  int threads = 0;
  std::string cache_type = "f32";
  bool json = false;
};

int run_bench_llm(BenchLlmCli& cli) {
  if (cli.options.backend.empty()) cli.options.backend = "cpu";
  cli.options.cache_f16 = cli.cache_type == "f16";
  backends::backend_by_name(cli.options.backend);  // a backend that cannot run here fails first
  const bool interactive = ::isatty(STDERR_FILENO) != 0;
  const bench::LlmBenchResult r = bench::run_llm_bench(cli.options, [&](int done, int total) {
    if (interactive) std::cerr << fmt::format("\r\033[K[{}/{}] repetitions", done, total) << std::flush;
  });
  if (interactive) std::cerr << "\r\033[K" << std::flush;
  const int threads = runtime::default_pool().size();
  std::ostream& table = cli.json ? std::cerr : std::cout;
  table << fmt::format("{}: {:.1f} MiB, {} on {} threads, {} repetitions\n", cli.options.model,
                       static_cast<double>(r.file_bytes) / (1 << 20), cli.options.backend, threads,
                       cli.options.repetitions)
        << fmt::format("  prefill {:>4} tokens: {:8.2f} tokens/s (median)\n", cli.options.prompt_tokens, r.prefill_median)
        << fmt::format("  decode  {:>4} tokens: {:8.2f} tokens/s (median)\n", cli.options.gen_tokens, r.decode_median)
        << fmt::format("  load {:.2f} s, first token {:.2f} s after the start, decode graph ready in {:.3f} s, "
                       "peak RSS {:.0f} MiB\n",
                       r.load_s, r.first_token_s, r.decode_compile_s, static_cast<double>(r.peak_rss_bytes) / (1 << 20));
  if (cli.json) {
    const nlohmann::json out{{"model", cli.options.model},
                             {"backend", cli.options.backend},
                             {"threads", threads},
                             {"prefill_tokens", cli.options.prompt_tokens},
                             {"decode_tokens", cli.options.gen_tokens},
                             {"repetitions", cli.options.repetitions},
                             {"prefill_tokens_per_s", r.prefill_median},
                             {"decode_tokens_per_s", r.decode_median},
                             {"prefill_runs", r.prefill_tokens_per_s},
                             {"decode_runs", r.decode_tokens_per_s},
                             {"load_s", r.load_s},
                             {"first_token_s", r.first_token_s},
                             {"decode_compile_s", r.decode_compile_s},
                             {"peak_rss_bytes", r.peak_rss_bytes},
                             {"file_bytes", r.file_bytes},
                             {"cache_type", cli.cache_type}};
    std::cout << out.dump() << std::endl;
  }
  return kExitOk;
}

}  // namespace

Command add_bench_llm_command(CLI::App& bench) {
  auto cli = std::make_shared<BenchLlmCli>();
  bench::LlmBenchOptions& o = cli->options;
  CLI::App* app = bench.add_subcommand("llm", "Prefill and decode tokens/s of a GGUF language model (as llama-bench)");
  app->add_option("-m,--model", o.model, "GGUF model file")->required()->check(CLI::ExistingFile);
  app->add_option("-p,--prompt-tokens", o.prompt_tokens, "Prompt tokens, fed in one batch")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app->add_option("-n,--gen-tokens", o.gen_tokens, "Tokens generated one at a time after the prompt")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  app->add_option("--ctx", o.ctx, "KV-cache rows (default: prompt + generated tokens)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  app->add_option("-r,--repeat", o.repetitions, "Timed repetitions (medians reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_threads_option(*app, cli->threads);
  app->add_option("--cache-type", cli->cache_type, "KV-cache dtype (llama.cpp's default is f16)")
      ->check(CLI::IsMember({"f32", "f16"}))
      ->capture_default_str();
  app->add_option("--backend,--device", o.backend, "Backend (default: cpu)")->check(CLI::IsMember(backends::backend_names()));
  app->add_flag("--json", cli->json, "End with one JSON object (the table goes to stderr)");
  return {app, [cli] { return run_bench_llm(*cli); }};
}

}  // namespace tessera::cli
