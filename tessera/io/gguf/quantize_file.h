#pragma once
// Model quantization (the library side of `tessera quantize`): reads a GGUF or safetensors file,
// chooses each tensor's output type the way llama-quantize does, encodes, and writes a GGUF v3 file.
//
// The default choice follows llama-quantize (src/llama-quant.cpp, tensor_allows_quantization and
// tensor_type_fallback): a tensor is quantized only if it has at least 2 dimensions and its name ends
// in "weight"; norms ("_norm.weight"), MoE router weights ("ffn_gate_inp.weight"), positional and
// token-type embeddings, and a few small special tensors (ssm_conv1d, relative-position biases,
// ...) keep their type. Everything else (1-D tensors: norms, biases) stays as it is, i.e. f32. A row
// length that is not a multiple of the target's block size falls back as llama.cpp does
// (Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, and F16 if even that does not fit).
// This is llama-quantize's `--pure` behaviour unless a mix is named (q3_k_s/m/l, q4_k_s/m,
// q5_k_s/m, or any llama-quantize file type with `llama_mix`): the mix adds llama-quantize's per-tensor
// choices (llama_mix.h) as overrides after the user's; a choice whose blocks do not fit the rows falls
// back from the chosen type as above (Q6_K -> Q8_0), as llama.cpp's tensor_type_fallback does.
//
// A Tessera training checkpoint (safetensors with metadata format "tessera-checkpoint-1") keeps only
// its model: the optimiser state ("optim.*" tensors and metadata) is dropped, and the plan says so.
//
// Tensors already in a block format (a Q4_K model, say) are copied when they are already in the chosen
// type; re-encoding them into another type fails with an error unless `allow_requantize` (as
// llama-quantize refuses without --allow-requantize), which dequantizes and encodes again.
// general.file_type always describes the tensors written: the requested type when any tensor got it,
// else the most common type of the weight matrices (no label when llama.cpp has none for it).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/io/gguf/llama_mix.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::io::gguf {

// "PATTERN=TYPE": PATTERN matches a tensor if it matches the whole name, either as a shell glob
// ("blk.*.attn_v.weight") or as a POSIX extended regular expression ("blk\.[0-3]\..*"). Unlike
// llama-quantize's --tensor-type (a regex search), the match is anchored, so "output.weight" does not
// also select "blk.0.attn_output.weight".
struct TypeOverride {
  std::string pattern;
  quant::GgmlType type;
  bool from_mix = false;  // a mix's choice: falls back like the base type where rows do not fit (else an error)
  static TypeOverride parse(const std::string& spec);  // throws on a malformed spec or unknown type
  bool matches(const std::string& name) const;
};

struct QuantizeOptions {
  quant::GgmlType type = quant::GgmlType::q4_k;
  std::string mix;                      // "" (pure) or a llama_mix_names() entry (type: its base type)
  std::vector<TypeOverride> overrides;  // first match wins
  bool allow_requantize = false;        // re-encode tensors already in another block format (else an error)
};

struct TensorPlan {
  std::string name;
  std::vector<int64_t> ne;  // GGUF order
  quant::GgmlType from = quant::GgmlType::f32;
  quant::GgmlType to = quant::GgmlType::f32;
  std::string reason;  // why `to` was chosen
  uint64_t bytes_in = 0, bytes_out = 0;
  bool dropped = false;  // not written: a training checkpoint's optimiser state
};

// The output type of one tensor under `options` (reason filled in); throws when it would re-encode a
// block-format tensor without allow_requantize, or when an override does not fit its rows.
TensorPlan plan_tensor(const std::string& name, const std::vector<int64_t>& ne, quant::GgmlType from,
                       const QuantizeOptions& options);

// Options for a `--type` name: a GGML type ("q4_0", pure) or a mix ("q4_k_m": type q4_k, mix set).
// With `llama_mix` a plain name means llama-quantize's file type of that name (q2_k, q6_k, q4_0, ...;
// q3_k/q4_k/q5_k are its aliases of the _m mixes). Throws naming the choices for anything else.
QuantizeOptions options_for_type(const std::string& name, bool llama_mix = false);
// The overrides a mix adds for a Llama-shaped model of `n_layers` blocks (attn_q/k/v/output and
// ffn_gate/down/up per block, rows whole super-blocks, one query head per KV head unless `model` says
// otherwise); `has_output` false when the lm_head is token_embd (tied), which then gets the output
// matrix's type.
std::vector<TypeOverride> mix_overrides(const std::string& mix, int64_t n_layers, bool has_output,
                                        const MixModel* model = nullptr);

// llama.cpp's general.file_type for a model mostly of `type` (LLAMA_FTYPE_*).
uint32_t llama_file_type(quant::GgmlType type);

// general.file_type for a file of these tensors: `requested`'s label when any tensor got it, else that
// of the most common type among the weight matrices; nullopt when llama.cpp has no label for it.
std::optional<uint32_t> file_type_label(const std::vector<TensorPlan>& plans, quant::GgmlType requested);

// Encodes `rows` rows of `n` f32 values as `type`, rows spread over the thread pool; an error names the row.
std::vector<uint8_t> encode_rows(quant::GgmlType type, const float* values, int64_t rows, int64_t n);

// Converts `in` (GGUF or safetensors, detected from its first bytes) to a GGUF file at `out`.
// `on_tensor` (optional) is called after each tensor is encoded, with its index and the total count.
std::vector<TensorPlan> quantize_file(const std::string& in, const std::string& out, const QuantizeOptions& options,
                                      const std::function<void(const TensorPlan&, size_t, size_t)>& on_tensor = {});

}  // namespace tessera::io::gguf
