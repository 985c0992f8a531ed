#include "tessera/models/llm/llm_model.h"

#include "tessera/core/error.h"

namespace tessera::models::llm {

namespace {

std::variant<LlamaWeights, Gpt2Weights> load_weights(const io::gguf::Reader& file, const LoadOptions& options) {
  const LlmConfig config = read_llm_config(file);
  if (config.arch == Arch::llama) return load_llama(file, config, options.stack_projections);
  return load_gpt2(file, config);
}

}  // namespace

LlmModel LlmModel::load(const std::string& path, const LoadOptions& options) {
  return LlmModel(io::gguf::Reader::open(path), options);
}

LlmModel::LlmModel(const io::gguf::Reader& file, const LoadOptions& options)
    : file_(file), weights_(load_weights(file, options)) {}

const LlmConfig& LlmModel::config() const {
  return std::visit([](const auto& w) -> const LlmConfig& { return w.config; }, weights_);
}

Tensor LlmModel::forward(const Tensor& tokens, const Tensor& positions, const Attend& attend,
                         bool last_row_only) const {
  if (const auto* llama = std::get_if<LlamaWeights>(&weights_)) {
    return llama_forward(*llama, tokens, positions, attend, last_row_only);
  }
  return gpt2_forward(std::get<Gpt2Weights>(weights_), tokens, positions, attend, last_row_only);
}

ir::Graph LlmModel::prefill_graph(int64_t n) const {
  const Tensor tokens = Tensor::placeholder("tokens", DType::i64, {n});
  const Tensor positions = Tensor::placeholder("positions", DType::i64, {n});
  const Tensor logits = forward(tokens, positions);
  return ir::Graph::build({tokens.value(), positions.value()}, {logits.value()},
                          std::string(arch_name(config().arch)) + "_prefill");
}

void LlmModel::check_tokens(const std::vector<int64_t>& tokens) const {
  const LlmConfig& c = config();
  if (tokens.empty()) fail("{}: no tokens to run (the sequence is empty)", file_.source());
  if (static_cast<int64_t>(tokens.size()) > c.n_ctx) {
    fail("{}: {} tokens exceed the context length {} ({})", file_.source(), tokens.size(), c.n_ctx,
         c.key("context_length"));
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.n_vocab) {
      fail("{}: token {} at position {} is outside the vocabulary [0, {})", file_.source(), tokens[i], i, c.n_vocab);
    }
  }
}

}  // namespace tessera::models::llm
