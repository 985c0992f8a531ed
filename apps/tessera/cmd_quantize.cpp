// tessera quantize IN OUT --type TYPE: converts a GGUF or safetensors model into a GGUF file whose
// weight matrices are encoded in a GGML block format, choosing per tensor as llama-quantize does.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "command.h"
#include "usage_errors.h"
#include "tessera/core/printable.h"
#include "tessera/io/gguf/quantize_file.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::cli {

namespace {

struct QuantizeCliOptions {
  std::string in, out, type;
  std::vector<std::string> keep;
  bool allow_requantize = false;
  bool llama_mix = false;
  bool quiet = false;
};

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:.{}f} {}", bytes, u == 0 ? 0 : 1, units[u]);
}

int run_quantize(const QuantizeCliOptions& o) {
  io::gguf::QuantizeOptions options = io::gguf::options_for_type(o.type, o.llama_mix);
  options.allow_requantize = o.allow_requantize;
  for (const std::string& spec : o.keep) options.overrides.push_back(io::gguf::TypeOverride::parse(spec));
  uint64_t in_bytes = 0, out_bytes = 0;
  int changed = 0, dropped = 0;
  uint64_t dropped_bytes = 0;
  const auto plans =
      io::gguf::quantize_file(o.in, o.out, options, [&](const io::gguf::TensorPlan& p, size_t i, size_t n) {
        if (p.dropped) {
          ++dropped;
          dropped_bytes += p.bytes_in;
          return;  // summarised below: a checkpoint's optimiser state is as large as the model
        }
        in_bytes += p.bytes_in;
        out_bytes += p.bytes_out;
        changed += p.from != p.to;
        if (o.quiet) return;
        std::cout << fmt::format("[{:>4}/{}] {:<40} {:>5} -> {:<5} {:>10} -> {:<10} {}\n", i + 1, n, printable(p.name, 64),
                                 quant::type_name(p.from), quant::type_name(p.to),
                                 human_bytes(static_cast<double>(p.bytes_in)),
                                 human_bytes(static_cast<double>(p.bytes_out)), p.reason);
        std::cout.flush();
      });
  if (dropped > 0) {
    std::cout << fmt::format("dropped the optimiser state of the training checkpoint: {} tensors, {}\n", dropped,
                             human_bytes(static_cast<double>(dropped_bytes)));
  }
  std::cout << fmt::format("wrote {}: {} tensors ({} re-encoded), {} -> {}\n", o.out, plans.size() - dropped, changed,
                           human_bytes(static_cast<double>(in_bytes)), human_bytes(static_cast<double>(out_bytes)));
  return kExitOk;
}

}  // namespace

Command add_quantize_command(CLI::App& root) {
  auto o = std::make_shared<QuantizeCliOptions>();
  CLI::App* app = root.add_subcommand("quantize", "Quantize a GGUF or safetensors model into a GGUF file");
  app->add_option("IN", o->in, "Input model (.gguf or .safetensors)")->required()->check(CLI::ExistingFile);
  app->add_option("OUT", o->out, "Output GGUF file (written atomically)")->required()->check(output_file());
  app->add_option("--type", o->type,
                  "Block type for the weight matrices: q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k q4_k q5_k q6_k f16 bf16 f32 "
                  "(every weight matrix in it, as llama-quantize --pure), or one of llama-quantize's mixes q3_k_s "
                  "q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m (not q2_k_s: it needs an importance matrix)")
      ->required();
  app->add_flag("--llama-mix", o->llama_mix,
                "Read a plain --type as llama-quantize's file type of that name without --pure (q2_k: Q3_K/Q4_K "
                "attn_v, Q3_K ffn_down and attn_output; q6_k, q4_0, ...: Q6_K output.weight; q3_k/q4_k/q5_k: the "
                "_m mixes)");
  app->add_option("--keep", o->keep,
                  "PATTERN=TYPE: tensors whose whole name matches PATTERN (a glob, or an extended regular "
                  "expression) get TYPE instead, e.g. --keep 'output.weight=f16' --keep 'blk.*.attn_v.weight=q8_0' "
                  "(repeatable; the first match wins)")
      ->type_name("PATTERN=TYPE");
  app->add_flag("--allow-requantize", o->allow_requantize,
                "Re-encode tensors already in another block format (dequantized, then quantized again; without "
                "this flag that is an error)");
  app->add_flag("-q,--quiet", o->quiet, "Print only the summary line");
  app->footer(
      "Default choice per tensor (llama-quantize's rules; its per-tensor mixes with q4_k_m, q3_k_s, ... or\n"
      "--llama-mix): only tensors with 2 or more dimensions whose name ends in 'weight' are quantized; norms,\n"
      "biases and other 1-D tensors, MoE router weights and positional embeddings keep their type. Rows\n"
      "whose length is not a multiple of the block size fall back (q2_k/q3_k -> q4_0, q4_k -> q5_0,\n"
      "q5_k -> q5_1, q6_k -> q8_0, else f16), from the type a mix chose where it chose one.\n"
      "Already-quantized inputs: tensors already in the chosen type are copied; re-encoding a quantized tensor\n"
      "into another type (say Q4_K -> Q8_0) compounds two rounding errors and stops with an error unless\n"
      "--allow-requantize is given. general.file_type always names the type the weight matrices were written in.\n"
      "A training checkpoint of `tessera train` keeps its model only: the optimiser state (Adam moments,\n"
      "momentum buffers) is dropped.");
  return {app, [o] { return run_quantize(*o); }};
}

}  // namespace tessera::cli
