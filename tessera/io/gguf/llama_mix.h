#pragma once
// llama-quantize's file-type mixes (Q2_K, Q3_K_M, Q4_K_S, ...): which GGML type each tensor of a model
// gets when llama-quantize runs without --pure. The rules restate llama.cpp v0.5.0's
// llama_tensor_get_type_impl (src/llama-quant.cpp) for the K-quant and legacy file types:
//   - output.weight (token_embd.weight when the head is tied) gets Q6_K, or Q8_0 for Falcon or when its
//     rows are not whole blocks of the base type (the Q8_0 file type keeps Q8_0);
//   - attn_v (and the fused attn_qkv / attn_kv_b, which share its counter) gets more bits: Q2_K
//     Q4_K with 4+ query heads per KV head else Q3_K; Q2_K_S Q4_K with 4+; Q3_K_M Q5_K for the first
//     two, then Q4_K; Q3_K_L Q5_K; Q4_K_M/Q5_K_M Q6_K where use_more_bits; Q4_K_S Q5_K for the first
//     four; a Llama of 80 layers with grouped KV heads (the "70B" rule) lifts Q3_K/Q4_K to Q5_K, and
//     8-expert models use Q8_0 (attn_k too);
//   - ffn_down: Q2_K Q3_K; Q2_K_S Q4_K in the first eighth; Q3_K_M Q5_K in the first sixteenth then
//     Q4_K (Falcon: Q3_K outside use_more_bits); Q3_K_L Q5_K (Falcon Q4_K); Q4_K_M/Q5_K_M Q6_K where
//     use_more_bits (Falcon Q4_K_M: Q6_K / Q5_K / Q4_K); Q4_K_S Q5_K in the first eighth;
//   - attn_output: Q2_K Q3_K, Q3_K_M Q4_K, Q3_K_L Q5_K (Falcon: Q3_K_L Q4_K); 8-expert models Q5_K
//     for Q2_K, Q3_K_S/M and Q4_K_S/M.
// use_more_bits(i, n) is i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2. Layers are counted as llama.cpp
// counts them: the how-many-th attn_v-like / ffn_down tensor in its tensor order (layer first, then
// name), except that MoE models read the layer from the name. A chosen type whose blocks do not fit a
// row falls back later as llama.cpp does (quantize_file.h: Q6_K -> Q8_0, Q5_K -> Q5_1, ...).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/quant/ggml_type.h"

namespace tessera::io::gguf {

struct TypeOverride;

// The hyper-parameters llama-quantize's rules read (GGUF `<arch>.block_count`, `.attention.head_count`,
// `.attention.head_count_kv`, `.expert_count`).
struct MixModel {
  std::string arch = "llama";
  int64_t n_layers = 0;
  int64_t n_head = 1, n_head_kv = 1;
  int64_t n_expert = 0;
  bool has_output = true;  // false: the head is tied to token_embd.weight, which then gets output's type
};

// A tensor as the rules see it: its name and row length (ne[0]).
struct MixTensor {
  std::string name;
  int64_t row_length = 0;
};

// The mixes, lower-case as `tessera quantize --type` takes them: q2_k, q2_k_s, q3_k_s, q3_k_m, q3_k_l,
// q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k, and the legacy q4_0, q4_1, q5_0, q5_1, q8_0 (only output.weight
// differs for those). options_for_type refuses q2_k_s, which needs an importance matrix.
const std::vector<std::string>& llama_mix_names();
// The mix's base type (q3_k for q3_k_m), or nullopt for a name that is not a mix.
std::optional<quant::GgmlType> llama_mix_base_type(const std::string& mix);
// llama.cpp's general.file_type (LLAMA_FTYPE_MOSTLY_*) of a mix: 11 for q3_k_s, 15 for q4_k_m, ...
uint32_t llama_mix_file_type(const std::string& mix);

// The type llama-quantize picks for each of `tensors` that its mix moves off the base type, as
// exact-name overrides marked from_mix. `tensors` are those llama-quantize runs its rules on, in its
// tensor order: the ones it quantizes at all, less those a manual override (--tensor-type) picks,
// since neither advances a counter.
std::vector<TypeOverride> llama_mix_overrides(const std::string& mix, const MixModel& model,
                                              const std::vector<MixTensor>& tensors);

}  // namespace tessera::io::gguf
