// tessera init-model --arch llama|gpt2 --dim ... --out FILE.gguf: writes a seeded random-weight model of
// any shape, with a working synthetic tokenizer, for tests and benchmarks (models/llm/random_model.h).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include <unistd.h>

#include "command.h"
#include "usage_errors.h"
#include "tessera/core/error.h"
#include "tessera/models/llm/random_model.h"

namespace tessera::cli {

namespace {

struct InitModelCli {
  models::llm::RandomModelSpec spec;
  std::string arch = "llama", out;
  bool quiet = false;
};

int run_init_model(InitModelCli& cli) {
  cli.spec.arch = cli.arch == "gpt2" ? models::llm::Arch::gpt2 : models::llm::Arch::llama;
  try {
    cli.spec.validate();
  } catch (const Error& e) {
    std::cerr << "tessera init-model: error: " << e.what() << "\n";
    return kExitUsage;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const bool interactive = !cli.quiet && ::isatty(STDERR_FILENO) != 0;
  models::llm::write_random_model(cli.spec, cli.out, [&](size_t i, size_t n, const std::string& name) {
    if (!interactive) return;
    const double t = elapsed(), eta = t / static_cast<double>(i + 1) * static_cast<double>(n - i - 1);
    std::cerr << fmt::format("\r\033[K[{}/{}] {} ({:.1f} s, ETA {:.1f} s)", i + 1, n, name, t, eta) << std::flush;
  });
  if (interactive) std::cerr << "\r\033[K" << std::flush;
  const auto bytes = std::filesystem::file_size(cli.out);
  if (!cli.quiet) {
    std::cout << fmt::format("wrote {}: random {} ({} layers, dim {}, vocab {}, {}), {:.1f} MiB in {:.1f} s\n", cli.out,
                             cli.arch, cli.spec.layers, cli.spec.dim, cli.spec.vocab, cli.spec.type,
                             static_cast<double>(bytes) / (1 << 20), elapsed());
  }
  return kExitOk;
}

}  // namespace

Command add_init_model_command(CLI::App& root) {
  auto cli = std::make_shared<InitModelCli>();
  models::llm::RandomModelSpec& s = cli->spec;
  CLI::App* app = root.add_subcommand("init-model", "Write a seeded random-weight Llama or GPT-2 GGUF model of any shape");
  app->add_option("--arch", cli->arch, "Architecture")
      ->check(CLI::IsMember({"llama", "gpt2"}))
      ->capture_default_str();
  app->add_option("--dim", s.dim, "Embedding width")->capture_default_str();
  app->add_option("--layers", s.layers, "Transformer blocks")->capture_default_str();
  app->add_option("--heads", s.heads, "Query heads")->capture_default_str();
  app->add_option("--kv-heads", s.kv_heads, "Key/value heads (0: as many as query heads; llama only)")
      ->capture_default_str();
  app->add_option("--ffn", s.ffn, "Feed-forward hidden width")->capture_default_str();
  app->add_option("--vocab", s.vocab, "Vocabulary size (the synthetic tokenizer gets exactly this many tokens)")
      ->capture_default_str();
  app->add_option("--ctx", s.ctx, "Context length")->capture_default_str();
  app->add_flag("--tied", s.tied, "No output.weight: the lm_head is token_embd (llama; gpt2 is always tied)");
  app->add_option("--seed", s.seed, "Seed of the weights (same seed, same bytes)")->capture_default_str();
  app->add_option("--type", s.type,
                  "Type of the weight matrices: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k q4_k q5_k q6_k, or the "
                  "mixes q4_k_m q5_k_m")
      ->capture_default_str();
  app->add_option("--rope-base", s.rope_freq_base, "RoPE frequency base (llama)")->capture_default_str();
  app->add_option("--eps", s.norm_eps, "Normalisation epsilon")->capture_default_str();
  app->add_option("--name", s.name, "general.name (default: random-<arch>)");
  app->add_option("-o,--out", cli->out, "Output GGUF file (written atomically)")->required()->check(output_file());
  app->add_flag("-q,--quiet", cli->quiet, "Print nothing on success");
  return {app, [cli] { return run_init_model(*cli); }};
}

}  // namespace tessera::cli
