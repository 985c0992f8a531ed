// tessera convert HF_FOLDER -o OUT.gguf [--type f16]: converts a Hugging Face GPT-2 or Llama folder
// (config.json, safetensors weights, tokenizer.json or vocab.json + merges.txt) into a GGUF file that
// Tessera and llama.cpp load, its weight matrices in any GGML type or llama-quantize mix
// (models/llm/hf_convert.h).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "command.h"
#include "usage_errors.h"
#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/models/llm/hf_convert.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::cli {

namespace {

struct ConvertCli {
  std::string folder, out, type = "f16", name;
  std::vector<std::string> keep;
  bool quiet = false;
};

int run_convert(const ConvertCli& cli) {
  models::llm::HfConvertOptions options;
  options.type = cli.type;
  options.name = cli.name;
  try {  // a wrong --type or --keep is a usage error, reported before any work
    (void)io::gguf::options_for_type(cli.type);
    for (const std::string& spec : cli.keep) options.overrides.push_back(io::gguf::TypeOverride::parse(spec));
  } catch (const Error& e) {
    std::cerr << "tessera convert: error: " << e.what() << "\n";
    return kExitUsage;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const bool interactive = !cli.quiet && ::isatty(STDERR_FILENO) != 0;
  const models::llm::HfConvertResult r = models::llm::convert_hf_model(
      cli.folder, cli.out, options, [&](const io::gguf::TensorPlan& p, size_t i, size_t n) {
        if (!interactive) return;
        const double t = elapsed(), eta = t / static_cast<double>(i + 1) * static_cast<double>(n - i - 1);
        std::cerr << fmt::format("\r\033[K[{}/{}] {} -> {} ({:.1f} s, ETA {:.1f} s)", i + 1, n, printable(p.name, 64),
                                 quant::type_name(p.to), t, eta)
                  << std::flush;
      });
  if (interactive) std::cerr << "\r\033[K" << std::flush;
  if (!cli.quiet) {
    const auto bytes = std::filesystem::file_size(cli.out);
    const models::llm::LlmConfig& c = r.config;
    std::cout << fmt::format(
        "wrote {}: {} ({} layers, dim {}, {} heads / {} kv, vocab {}{}, {}), tokenizer from {}, {} tensors, {:.1f} "
        "MiB in {:.1f} s\n",
        cli.out, models::llm::arch_name(c.arch), c.n_layer, c.n_embd, c.n_head, c.n_head_kv, c.n_vocab,
        r.tied ? ", tied" : "", cli.type, r.tokenizer, r.plans.size(), static_cast<double>(bytes) / (1 << 20),
        elapsed());
  }
  return kExitOk;
}

}  // namespace

Command add_convert_command(CLI::App& root) {
  auto cli = std::make_shared<ConvertCli>();
  CLI::App* app = root.add_subcommand("convert", "Convert a Hugging Face GPT-2 or Llama model folder to a GGUF file");
  app->add_option("HF_FOLDER", cli->folder,
                  "The model folder: config.json, model.safetensors (or model.safetensors.index.json and its shards), "
                  "tokenizer.json or vocab.json + merges.txt")
      ->required();
  app->add_option("-o,--out", cli->out, "Output GGUF file (written atomically)")->required()->check(output_file());
  app->add_option("--type", cli->type,
                  "Type of the weight matrices: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k, or "
                  "llama-quantize's mixes q4_k_m q5_k_m (norms and biases stay f32)")
      ->capture_default_str();
  app->add_option("--keep", cli->keep,
                  "PATTERN=TYPE: GGUF tensors whose whole name matches PATTERN get TYPE instead, as in tessera "
                  "quantize (repeatable; the first match wins)")
      ->type_name("PATTERN=TYPE");
  app->add_option("--name", cli->name, "general.name (default: the folder's name)");
  app->add_flag("-q,--quiet", cli->quiet, "Print nothing on success");
  return {app, [cli] { return run_convert(*cli); }};
}

}  // namespace tessera::cli
