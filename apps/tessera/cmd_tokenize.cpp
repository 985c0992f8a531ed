// tessera tokenize -m FILE.gguf -p TEXT: the token ids of TEXT under the GGUF file's tokenizer, each
// with its piece (llama-tokenize's listing), or one JSON object with --json.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "command.h"
#include "tessera/core/printable.h"
#include "tessera/tokenizers/tokenizer.h"

namespace tessera::cli {

namespace {

struct TokenizeCliOptions {
  std::string model, prompt;
  bool json = false;
  bool no_bos = false;
  bool parse_special = false;
};

int run_tokenize(const TokenizeCliOptions& o) {
  const auto tok = tokenizers::Tokenizer::from_gguf(o.model);
  const auto ids = tok.encode(o.prompt, {.add_special = !o.no_bos, .parse_special = o.parse_special});
  if (o.json) {
    nlohmann::json pieces = nlohmann::json::array();
    for (const auto id : ids) pieces.push_back(tok.piece(id));
    const nlohmann::json out{{"ids", ids}, {"pieces", pieces}, {"count", ids.size()}};
    // A byte token's piece may be part of a character: shown as U+FFFD rather than refused.
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  for (const auto id : ids) std::cout << fmt::format("{:>6} -> {}\n", id, printable_quoted(tok.piece(id)));
  return kExitOk;
}

}  // namespace

Command add_tokenize_command(CLI::App& root) {
  auto o = std::make_shared<TokenizeCliOptions>();
  CLI::App* app = root.add_subcommand("tokenize", "Print the token ids and pieces of a text under a GGUF tokenizer");
  app->add_option("-m,--model", o->model, "GGUF file with tokenizer.ggml.* metadata")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("-p,--prompt", o->prompt, "The text (UTF-8)")->required();
  app->add_flag("--json", o->json, "One JSON object: ids, pieces, count");
  app->add_flag("--no-bos", o->no_bos, "Add no BOS/EOS even where the vocabulary asks for them");
  app->add_flag("--parse-special", o->parse_special,
                "Match control tokens written in the text (<s>, <|endoftext|>) as the tokens themselves");
  return {app, [o] { return run_tokenize(*o); }};
}

}  // namespace tessera::cli
