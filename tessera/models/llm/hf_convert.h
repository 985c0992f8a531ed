#pragma once
// Hugging Face model folders to GGUF files that Tessera and llama.cpp load (the library side of
// `tessera convert`), for GPT-2 (GPT2LMHeadModel) and Llama (LlamaForCausalLM):
//   config.json        the hyperparameters (model_type picks the architecture; features Tessera's
//                      forward passes lack, such as rope_scaling or attention biases, are refused);
//   *.safetensors      model.safetensors, or the shards a model.safetensors.index.json names, in
//                      F32, F16 or BF16; each tensor is read from the mapped file, renamed to
//                      llama.cpp's names and reshaped as convert_hf_to_gguf.py does (GPT-2's Conv1D
//                      weights [in, out] transposed; Llama's q_proj/k_proj rows permuted from
//                      rotate_half's two halves of each head to the consecutive pairs GGUF rotates);
//   the tokenizer      tokenizer.json or vocab.json + merges.txt (tokenizers/hf_vocab.h).
// Every tensor is decoded to f32 and then goes through the same per-tensor plan as `tessera quantize`
// (io/gguf/quantize_file.h: plan_tensor, the q4_k_m / q5_k_m mixes), so norms and biases stay f32 and
// the weight matrices get the requested type. Everything is checked before anything is encoded
// (a missing file, key or tensor, a tensor of the wrong shape or dtype, a tensor the architecture does
// not have: one line naming the file, the key or tensor and what was expected), and the output is
// written atomically, so a failure never leaves a half-written file.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/io/gguf/quantize_file.h"
#include "tessera/models/llm/llm_config.h"

namespace tessera::models::llm {

struct HfConvertOptions {
  std::string type = "f16";                       // a GGML type name or a mix (io::gguf::options_for_type)
  std::vector<io::gguf::TypeOverride> overrides;  // first match wins, before a mix's choices
  std::string name;                               // general.name (default: the folder's name)
};

struct HfConvertResult {
  LlmConfig config;       // the hyperparameters the written file declares
  bool tied = false;      // no output.weight: the lm_head is token_embd
  std::string tokenizer;  // where the vocabulary came from
  std::vector<std::string> weight_files;
  std::vector<io::gguf::TensorPlan> plans;  // in file order (names are GGUF's)
};

// Converts `folder` to a GGUF file at `out`. `on_tensor` (optional) follows progress: called after
// each tensor is encoded, with its plan, its index and the count.
HfConvertResult convert_hf_model(
    const std::string& folder, const std::string& out, const HfConvertOptions& options = {},
    const std::function<void(const io::gguf::TensorPlan&, size_t, size_t)>& on_tensor = {});

// The row order of a Llama q_proj / k_proj matrix of `n_heads` heads of `head_dim` rows in GGUF:
// GGUF row r is HF row rows[r]. Within each head HF rotates (x[j], x[j + head_dim/2]) (rotate_half),
// GGUF (x[2j], x[2j + 1]); llama.cpp's permute() is the same map.
std::vector<int64_t> hf_to_gguf_rope_rows(int64_t n_heads, int64_t head_dim);

}  // namespace tessera::models::llm
