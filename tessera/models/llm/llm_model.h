#pragma once
// A language model loaded from a GGUF file: its hyperparameters, its weights (viewing the mapped file,
// in their GGUF encodings) and the forward pass of its architecture as a graph.
#include <cstdint>
#include <string>
#include <variant>

#include "tessera/core/device.h"
#include "tessera/ir/graph.h"
#include "tessera/models/llm/gpt2.h"
#include "tessera/models/llm/llama.h"

namespace tessera::models::llm {

// How the weights are arranged for the device that will run them.
struct LoadOptions {
  // One product for q/k/v and one for gate/up (llama.h): pays on a GPU, where every launch costs a few
  // microseconds; on the CPU it would only hold a second copy of those weights.
  bool stack_projections = false;
  // Stacked on a GPU, not on the host.
  static LoadOptions for_device(const Device& device) { return LoadOptions{!device.is_host()}; }
};

// A Llama-family or GPT-2 model read from a GGUF file, run as Tessera graphs.
class LlmModel {
 public:
  // Opens, validates and maps the file; throws naming the file and what is wrong with it.
  static LlmModel load(const std::string& path, const LoadOptions& options = {});
  explicit LlmModel(const io::gguf::Reader& file, const LoadOptions& options = {});

  const LlmConfig& config() const;  // hyperparameters read from the file's metadata
  const io::gguf::Reader& file() const { return file_; }  // the mapped GGUF file the weights view

  // Logits [n, n_vocab] of tokens and positions (integer [n]).
  // With last_row_only, only the last position's logits [1, n_vocab] (what generation samples from).
  Tensor forward(const Tensor& tokens, const Tensor& positions, const Attend& attend = causal_attend,
                 bool last_row_only = false) const;
  // The whole-sequence forward as a graph: inputs tokens and positions (i64 [n]), output logits.
  ir::Graph prefill_graph(int64_t n) const;

  // Throws unless `tokens` is a non-empty sequence of ids below n_vocab that fits the context.
  void check_tokens(const std::vector<int64_t>& tokens) const;

 private:
  io::gguf::Reader file_;  // the weights view its mapping
  std::variant<LlamaWeights, Gpt2Weights> weights_;
};

}  // namespace tessera::models::llm
