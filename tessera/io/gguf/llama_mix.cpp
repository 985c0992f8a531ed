// llama-quantize's per-tensor choices for its file-type mixes (see llama_mix.h for the rules).
#include "tessera/io/gguf/llama_mix.h"

#include <cstdio>
#include <map>

#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/gguf/quantize_file.h"

namespace tessera::io::gguf {

namespace {

using quant::GgmlType;

// The broad roles llama.cpp sorts tensors into by name (tensor_get_category).
enum class Role { output, token_embd, attn_v_like, attn_k, ffn_down, attn_output, other };

bool has(const std::string& name, const char* part) { return name.find(part) != std::string::npos; }

Role role_of(const std::string& name) {
  if (name == "output.weight") return Role::output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Role::token_embd;
  if (has(name, "attn_qkv.weight") || has(name, "attn_kv_b.weight") || has(name, "attn_v.weight")) {
    return Role::attn_v_like;
  }
  if (has(name, "attn_k.weight")) return Role::attn_k;
  if (has(name, "attn_q.weight")) return Role::other;
  if (has(name, "attn_output.weight")) return Role::attn_output;
  if (has(name, "ffn_up") || has(name, "ffn_gate")) return Role::other;
  if (has(name, "ffn_down")) return Role::ffn_down;
  return Role::other;
}

bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

struct MixInfo {
  GgmlType base;
  uint32_t file_type;
};

const std::map<std::string, MixInfo>& mixes() {
  static const std::map<std::string, MixInfo> table{
      {"q4_0", {GgmlType::q4_0, 2}},    {"q4_1", {GgmlType::q4_1, 3}},    {"q8_0", {GgmlType::q8_0, 7}},
      {"q5_0", {GgmlType::q5_0, 8}},    {"q5_1", {GgmlType::q5_1, 9}},    {"q2_k", {GgmlType::q2_k, 10}},
      {"q3_k_s", {GgmlType::q3_k, 11}}, {"q3_k_m", {GgmlType::q3_k, 12}}, {"q3_k_l", {GgmlType::q3_k, 13}},
      {"q4_k_s", {GgmlType::q4_k, 14}}, {"q4_k_m", {GgmlType::q4_k, 15}}, {"q5_k_s", {GgmlType::q5_k, 16}},
      {"q5_k_m", {GgmlType::q5_k, 17}}, {"q6_k", {GgmlType::q6_k, 18}},   {"q2_k_s", {GgmlType::q2_k, 21}},
  };
  return table;
}

const MixInfo& mix_info(const std::string& mix) {
  auto it = mixes().find(mix);
  if (it == mixes().end()) {
    std::string known;
    for (const std::string& m : llama_mix_names()) known += (known.empty() ? "" : ", ") + m;
    fail("unknown quantization mix '{}' (expected one of {})", printable(mix, 32), known);
  }
  return it->second;
}

// Walks the tensors in order, keeping llama.cpp's two counters.
class MixRules {
 public:
  MixRules(const std::string& mix, const MixModel& model, int64_t n_attention_wv)
      : mix_(mix), base_(mix_info(mix).base), model_(model), n_wv_(n_attention_wv) {}

  GgmlType choose(const MixTensor& t) {
    const bool falcon = model_.arch == "falcon";
    const int64_t n_gqa = model_.n_head_kv > 0 ? model_.n_head / model_.n_head_kv : 0;
    const bool seventy_b = model_.arch == "llama" && model_.n_layers == 80 && model_.n_head != model_.n_head_kv;
    GgmlType type = base_;
    const Role role = role_of(t.name);
    if (role == Role::output || (!model_.has_output && role == Role::token_embd)) {
      if (falcon || t.row_length % quant::type_traits(base_).block_size != 0) return GgmlType::q8_0;
      return base_ == GgmlType::q8_0 ? GgmlType::q8_0 : GgmlType::q6_k;
    }
    switch (role) {
      case Role::attn_v_like: {
        const int64_t i = i_wv_++;
        if (mix_ == "q2_k") {
          type = n_gqa >= 4 ? GgmlType::q4_k : GgmlType::q3_k;
        } else if (mix_ == "q2_k_s" && n_gqa >= 4) {
          type = GgmlType::q4_k;
        } else if (mix_ == "q3_k_m") {
          type = i < 2 ? GgmlType::q5_k : GgmlType::q4_k;
        } else if (mix_ == "q3_k_l") {
          type = GgmlType::q5_k;
        } else if ((mix_ == "q4_k_m" || mix_ == "q5_k_m") && use_more_bits(i, n_wv_)) {
          type = GgmlType::q6_k;
        } else if (mix_ == "q4_k_s" && i < 4) {
          type = GgmlType::q5_k;
        }
        if (seventy_b && (type == GgmlType::q3_k || type == GgmlType::q4_k)) type = GgmlType::q5_k;
        if (model_.n_expert == 8) type = GgmlType::q8_0;
        return type;
      }
      case Role::attn_k:
        return model_.n_expert == 8 ? GgmlType::q8_0 : type;
      case Role::ffn_down: {
        const int64_t n = model_.n_layers;
        const int64_t i = ffn_down_layer(t.name);
        const bool more = use_more_bits(i, n);
        if (mix_ == "q2_k") return GgmlType::q3_k;
        if (mix_ == "q2_k_s") return i < n / 8 ? GgmlType::q4_k : type;
        if (mix_ == "q3_k_m") return i < n / 16 ? GgmlType::q5_k : !falcon || more ? GgmlType::q4_k : GgmlType::q3_k;
        if (mix_ == "q3_k_l") return falcon ? GgmlType::q4_k : GgmlType::q5_k;
        if (mix_ == "q4_k_m" && falcon) return i < n / 16 ? GgmlType::q6_k : more ? GgmlType::q5_k : GgmlType::q4_k;
        if ((mix_ == "q4_k_m" || mix_ == "q5_k_m") && more) return GgmlType::q6_k;
        if (mix_ == "q4_k_s" && !falcon && i < n / 8) return GgmlType::q5_k;
        return type;
      }
      case Role::attn_output:
        if (falcon) return mix_ == "q3_k_l" ? GgmlType::q4_k : type;
        if (model_.n_expert == 8) {
          const bool bump = mix_ == "q2_k" || mix_ == "q3_k_s" || mix_ == "q3_k_m" || mix_ == "q4_k_s" || mix_ == "q4_k_m";
          return bump ? GgmlType::q5_k : type;
        }
        if (mix_ == "q2_k") return GgmlType::q3_k;
        if (mix_ == "q3_k_m") return GgmlType::q4_k;
        if (mix_ == "q3_k_l") return GgmlType::q5_k;
        return type;
      default:
        return type;
    }
  }

 private:
  // MoE models scatter a layer's expert tensors, so llama.cpp reads their layer from the name.
  int64_t ffn_down_layer(const std::string& name) {
    const int64_t counted = i_ffn_down_++;
    if (model_.n_expert <= 1) return counted;
    int layer = -1;
    TESSERA_CHECK(std::sscanf(name.c_str(), "blk.%d.", &layer) == 1 && layer >= 0 && layer < model_.n_layers,
                  "quantize mix {}: cannot tell the layer of tensor '{}' (expected blk.N. with N in [0, {}))", mix_,
                  printable(name, 96), model_.n_layers);
    return layer;
  }

  std::string mix_;
  GgmlType base_;
  MixModel model_;
  int64_t n_wv_;
  int64_t i_wv_ = 0, i_ffn_down_ = 0;
};

// Exact-name patterns for TypeOverride (glob metacharacters in a name are escaped).
std::string exact_pattern(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& llama_mix_names() {
  static const std::vector<std::string> names{"q2_k",   "q2_k_s", "q3_k_s", "q3_k_m", "q3_k_l",
                                              "q4_k_s", "q4_k_m", "q5_k_s", "q5_k_m", "q6_k",
                                              "q4_0",   "q4_1",   "q5_0",   "q5_1",   "q8_0"};
  return names;
}

std::optional<GgmlType> llama_mix_base_type(const std::string& mix) {
  auto it = mixes().find(mix);
  if (it == mixes().end()) return std::nullopt;
  return it->second.base;
}

uint32_t llama_mix_file_type(const std::string& mix) { return mix_info(mix).file_type; }

std::vector<TypeOverride> llama_mix_overrides(const std::string& mix, const MixModel& model,
                                              const std::vector<MixTensor>& tensors) {
  int64_t n_wv = 0;
  for (const MixTensor& t : tensors) n_wv += role_of(t.name) == Role::attn_v_like;
  MixRules rules(mix, model, n_wv);
  const GgmlType base = mix_info(mix).base;
  std::vector<TypeOverride> out;
  for (const MixTensor& t : tensors) {
    const GgmlType type = rules.choose(t);
    if (type != base) out.push_back({exact_pattern(t.name), type, /*from_mix=*/true});
  }
  return out;
}

}  // namespace tessera::io::gguf
