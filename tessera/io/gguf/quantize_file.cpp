#include "tessera/io/gguf/quantize_file.h"

#include <fnmatch.h>
#include <regex.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/atomic_file.h"
#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/io/gguf/llama_mix.h"
#include "tessera/io/safetensors.h"
#include "tessera/quant/quantize.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::io::gguf {

namespace {

using quant::GgmlType;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// llama-quantize's tensor_allows_quantization, minus the architecture-specific names Tessera does not
// know; returns the reason when the tensor must keep its type.
const char* keep_reason(const std::string& name, size_t n_dims) {
  if (n_dims < 2) return "1-D tensor (norms, biases) kept";
  if (!ends_with(name, "weight")) return "name does not end in 'weight'";
  static const char* const kNeverQuantized[] = {"_norm.weight",
                                                "ffn_gate_inp.weight",
                                                "position_embd",
                                                "token_types.weight",
                                                "ssm_conv1d",
                                                "shortconv.conv.weight",
                                                "attn_rel_b.weight",
                                                ".rel_pos",
                                                ".patch_embd",
                                                ".patch_merger",
                                                "altup",
                                                "laurel",
                                                "per_layer_model_proj",
                                                "time_mix_first.weight"};
  for (const char* part : kNeverQuantized) {
    if (contains(name, part)) return "kept by llama-quantize's rules";
  }
  return nullptr;
}

GgmlType fallback_type(GgmlType type) {
  switch (type) {
    case GgmlType::q2_k:
    case GgmlType::q3_k:
      return GgmlType::q4_0;
    case GgmlType::q4_k:
      return GgmlType::q5_0;
    case GgmlType::q5_k:
      return GgmlType::q5_1;
    case GgmlType::q6_k:
      return GgmlType::q8_0;
    default:
      return GgmlType::f16;
  }
}

// Rows of a tensor: the product of ne[1..] (ne[0] is the row length).
int64_t rows_of(const std::vector<int64_t>& ne) {
  int64_t rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  return rows;
}

bool fits(GgmlType type, int64_t row_length) {
  return row_length % quant::type_traits(type).block_size == 0;
}

// The layer of a tensor name ("blk.N." prefix), -1 for none.
int layer_of(const std::string& name) {
  int n = -1;
  if (std::sscanf(name.c_str(), "blk.%d.", &n) != 1) n = -1;
  return n;
}

struct Source {
  std::string name;
  GgmlType type;
  std::vector<int64_t> ne;
  const uint8_t* data;
  uint64_t nbytes;
  int layer = -1;
};

// llama.cpp's loader orders tensors by layer (none first), then by name; writing in that order
// reproduces llama-quantize's files byte for byte.
bool llama_tensor_order(const Source& a, const Source& b) {
  return a.layer != b.layer ? a.layer < b.layer : a.name < b.name;
}

bool is_float_type(GgmlType type) {
  return type == GgmlType::f32 || type == GgmlType::f16 || type == GgmlType::bf16;
}

bool is_gguf(const std::string& path) {
  MappedFile file(path);
  return file.size() >= 4 && std::memcmp(file.data(), "GGUF", 4) == 0;
}

// Tessera's training checkpoints (tessera/train/checkpoint.h) hold the optimiser's state beside the
// model; a quantized model has no use for it.
bool is_training_checkpoint(const SafetensorsFile& file) {
  auto it = file.metadata.find("format");
  return it != file.metadata.end() && it->second == "tessera-checkpoint-1";
}
bool is_optimizer_state(const std::string& name) { return name.rfind("optim.", 0) == 0; }

int64_t count_of(const Value& v, const std::string& what) {
  if (v.is_array()) {
    const std::vector<int64_t> per_layer = v.as_i64s(what);  // per-layer counts: llama.cpp reads layer 0's
    return per_layer.empty() ? 0 : per_layer[0];
  }
  return v.as_i64(what);
}

// The hyper-parameters llama-quantize's mixes read, from the GGUF metadata (defaults when absent).
MixModel mix_model_of(const Reader& reader) {
  MixModel m;
  const Value* arch = reader.find("general.architecture");
  m.arch = arch && arch->type() == ValueType::string ? arch->as_string() : "";
  auto count = [&](const std::string& key, int64_t fallback) {
    const Value* v = reader.find(m.arch + "." + key);
    return v ? count_of(*v, key) : fallback;
  };
  m.n_layers = count("block_count", 0);
  m.n_head = count("attention.head_count", 1);
  m.n_head_kv = count("attention.head_count_kv", m.n_head);
  m.n_expert = count("expert_count", 0);
  return m;
}

}  // namespace

TypeOverride TypeOverride::parse(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    fail("--keep '{}': expected PATTERN=TYPE, e.g. 'output.weight=f16' or 'blk.*.attn_v.weight=q8_0'", spec);
  }
  TypeOverride o{spec.substr(0, eq), quant::parse_type(spec.substr(eq + 1))};
  TESSERA_CHECK(quant::type_traits(o.type).can_quantize && o.type != GgmlType::q8_k && o.type != GgmlType::q8_1,
                "--keep '{}': {} is not a weight type Tessera can write", spec, quant::type_name(o.type));
  return o;
}

bool TypeOverride::matches(const std::string& name) const {
  if (::fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
  // Anchored, so that "output.weight" does not also catch "blk.0.attn_output.weight".
  regex_t re;
  const std::string anchored = "^(" + pattern + ")$";
  if (::regcomp(&re, anchored.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return false;  // not a valid regex
  const bool hit = ::regexec(&re, name.c_str(), 0, nullptr, 0) == 0;
  ::regfree(&re);
  return hit;
}

namespace {

// A tensor already in a block format is re-encoded only with allow_requantize: decoding and encoding
// again compounds two rounding errors, so doing it silently would hand out a worse model than asked.
void check_requantize(const TensorPlan& p, const QuantizeOptions& options) {
  if (p.to == p.from || !quant::is_block_type(p.from)) return;
  const std::string name = printable(p.name, 96);
  if (!options.allow_requantize) {
    fail("tensor '{}' is already quantized as {}; re-encoding it as {} would compound two rounding errors. "
         "Quantize the original f32/f16/bf16 weights instead, or pass --allow-requantize to dequantize and "
         "re-encode it anyway",
         name, quant::type_name(p.from), quant::type_name(p.to));
  }
  if (!quant::type_traits(p.from).can_dequantize) {
    fail("tensor '{}' is {}, which Tessera cannot decode, so it cannot be re-encoded as {}", name,
         quant::type_name(p.from), quant::type_name(p.to));
  }
}

}  // namespace

TensorPlan plan_tensor(const std::string& name, const std::vector<int64_t>& ne, GgmlType from,
                       const QuantizeOptions& options) {
  TensorPlan p{name, ne, from, from, "", 0, 0};
  const int64_t row = ne.empty() ? 1 : ne[0];
  for (const TypeOverride& o : options.overrides) {
    if (!o.matches(name)) continue;
    if (!fits(o.type, row) && o.from_mix) {
      // llama.cpp's tensor_type_fallback applies to the type the mix chose.
      GgmlType alt = fallback_type(o.type);
      if (!fits(alt, row)) alt = GgmlType::f16;
      p.to = alt;
      p.reason = fmt::format("mix chose {}, but rows of {} are not whole blocks: {} instead", quant::type_name(o.type),
                             row, quant::type_name(alt));
      check_requantize(p, options);
      return p;
    }
    if (!fits(o.type, row)) {
      fail("tensor '{}': override '{}' asks for {}, but its rows of {} values are not whole {} blocks",
           printable(name, 96), o.pattern, quant::type_name(o.type), row, quant::type_name(o.type));
    }
    p.to = o.type;
    p.reason = o.from_mix ? std::string("chosen by the mix") : "override '" + o.pattern + "'";
    check_requantize(p, options);
    return p;
  }
  if (const char* why = keep_reason(name, ne.size())) {
    p.reason = why;
    return p;
  }
  if (!is_float_type(from) && !quant::is_block_type(from)) {
    p.reason = fmt::format("{} tensors are not quantized", quant::type_name(from));
    return p;
  }
  p.to = options.type;
  p.reason = "quantized";
  if (!fits(p.to, row)) {
    GgmlType alt = fallback_type(p.to);
    if (!fits(alt, row)) alt = GgmlType::f16;
    p.reason = fmt::format("row length {} is not a multiple of {}'s block of {}: {} instead", row,
                           quant::type_name(p.to), quant::type_traits(p.to).block_size, quant::type_name(alt));
    p.to = alt;
  }
  if (p.to == from) p.reason = fmt::format("already {}", quant::type_name(from));
  check_requantize(p, options);
  return p;
}

QuantizeOptions options_for_type(const std::string& name, bool llama_mix) {
  QuantizeOptions o;
  std::string mix = name;
  if (llama_mix && (name == "q3_k" || name == "q4_k" || name == "q5_k")) mix = name + "_m";  // llama-quantize's aliases
  const bool suffixed = name.size() > 2 && (name.ends_with("_s") || name.ends_with("_m") || name.ends_with("_l"));
  // llama-quantize refuses Q2_K_S without an importance matrix (tensor_requires_imatrix), and Tessera takes none.
  TESSERA_CHECK(mix != "q2_k_s",
                "--type q2_k_s: llama-quantize needs an importance matrix for its Q2_K tensors, which tessera quantize "
                "does not take; use q2_k with --llama-mix, or q3_k_s");
  if (const std::optional<GgmlType> base = llama_mix_base_type(mix); base && (llama_mix || suffixed)) {
    o.type = *base;
    o.mix = mix;
    return o;
  }
  if (suffixed) (void)llama_mix_file_type(mix);  // fails listing the mixes
  // Without a block type (f16, bf16, f32) llama-quantize has no rules to apply: the result is pure.
  try {
    o.type = quant::parse_type(name);
  } catch (const Error& e) {
    std::string known;
    for (const std::string& m : llama_mix_names()) {
      if (m.find('_', 2) != std::string::npos) known += (known.empty() ? "" : ", ") + m;
    }
    fail("{} (or a mix: {})", e.what(), known);
  }
  return o;
}

std::vector<TypeOverride> mix_overrides(const std::string& mix, int64_t n_layers, bool has_output,
                                        const MixModel* model) {
  if (mix.empty()) return {};
  MixModel m = model ? *model : MixModel{};
  m.n_layers = n_layers;
  m.has_output = has_output;
  // The tensors of a Llama block in llama.cpp's order (layer, then name); rows of 256 fit every type.
  std::vector<MixTensor> tensors{{"token_embd.weight", 256}};
  if (has_output) tensors.insert(tensors.begin(), {"output.weight", 256});
  for (int64_t i = 0; i < n_layers; ++i) {
    for (const char* t : {"attn_k", "attn_output", "attn_q", "attn_v", "ffn_down", "ffn_gate", "ffn_up"}) {
      tensors.push_back({fmt::format("blk.{}.{}.weight", i, t), 256});
    }
  }
  std::vector<TypeOverride> out = llama_mix_overrides(mix, m, tensors);
  // Each block's attn_v stands for its attn_v-like tensor, whichever the model has (GPT-2's fused attn_qkv).
  for (TypeOverride& o : out) {
    const int layer = layer_of(o.pattern);
    if (layer >= 0 && o.pattern == fmt::format("blk.{}.attn_v.weight", layer)) {
      o.pattern = fmt::format("blk\\.{}\\.attn_(v|qkv|kv_b)\\.weight", layer);
    }
  }
  return out;
}

// general.file_type must describe the tensors written: the requested type when any tensor was encoded
// in it, else the most common type of the weight matrices (2+ dimensions; of all tensors when there
// are none) that llama.cpp has a label for; nullopt (no label) when there is none.
std::optional<uint32_t> file_type_label(const std::vector<TensorPlan>& plans, GgmlType requested) {
  std::map<GgmlType, size_t> matrices, all;
  for (const TensorPlan& p : plans) {
    if (p.to == requested) return llama_file_type(requested);
    if (p.ne.size() >= 2) ++matrices[p.to];
    ++all[p.to];
  }
  std::optional<uint32_t> label;
  size_t best = 0;
  for (const auto& [type, count] : matrices.empty() ? all : matrices) {
    if (count <= best) continue;
    try {
      label = llama_file_type(type);
      best = count;
    } catch (const Error&) {
      // a type llama.cpp names no file type after
    }
  }
  return label;
}

// Encodes rows of f32 values in parallel.
std::vector<uint8_t> encode_rows(GgmlType type, const float* values, int64_t rows, int64_t n) {
  const int64_t rb = quant::row_bytes(type, n, "quantize");
  std::vector<uint8_t> out(static_cast<size_t>(rows * rb));
  runtime::default_pool().parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      try {
        quant::quantize_row(type, values + r * n, out.data() + r * rb, n);
      } catch (const Error& e) {
        fail("row {}: {}", r, e.what());
      }
    }
  });
  return out;
}

uint32_t llama_file_type(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return 0;
    case GgmlType::f16:
      return 1;
    case GgmlType::q4_0:
      return 2;
    case GgmlType::q4_1:
      return 3;
    case GgmlType::q8_0:
      return 7;
    case GgmlType::q5_0:
      return 8;
    case GgmlType::q5_1:
      return 9;
    case GgmlType::q2_k:
      return 10;
    case GgmlType::q3_k:
      return 12;  // Q3_K_M, which llama-quantize --pure writes for "Q3_K"
    case GgmlType::q4_k:
      return 15;  // Q4_K_M
    case GgmlType::q5_k:
      return 17;  // Q5_K_M
    case GgmlType::q6_k:
      return 18;
    case GgmlType::bf16:
      return 32;
    default:
      fail("{} is not a model file type llama.cpp knows", quant::type_name(type));
  }
}

std::vector<TensorPlan> quantize_file(const std::string& in, const std::string& out, const QuantizeOptions& options,
                                      const std::function<void(const TensorPlan&, size_t, size_t)>& on_tensor) {
  llama_file_type(options.type);  // fails early for a type llama.cpp has no file type for
  Writer writer;
  std::vector<Source> sources;
  std::vector<TensorPlan> dropped;  // a training checkpoint's optimiser state
  MixModel model;
  // Keep whichever input representation alive until the file is written.
  std::shared_ptr<const void> keep_alive;
  if (is_gguf(in)) {
    auto reader = std::make_shared<Reader>(Reader::open(in));
    writer = Writer(reader->alignment());
    writer.copy_metadata(*reader);
    for (const TensorInfo& t : reader->tensors()) {
      sources.push_back({t.name, t.type, t.ne, reader->tensor_data(t), t.nbytes, layer_of(t.name)});
    }
    model = mix_model_of(*reader);
    keep_alive = reader;
  } else {
    auto st = std::make_shared<SafetensorsFile>(load_safetensors_with_metadata(in));
    const bool checkpoint = is_training_checkpoint(*st);
    for (const auto& [key, value] : st->metadata) {
      if (!(checkpoint && is_optimizer_state(key))) writer.set(key, Value::string(value));
    }
    for (const auto& [name, array] : st->tensors) {
      const Array& c = array;  // load_safetensors returns packed arrays
      if (checkpoint && is_optimizer_state(name)) {
        TensorPlan p{name, std::vector<int64_t>(c.shape().rbegin(), c.shape().rend()), gguf_type_of(c.dtype(), name),
                     gguf_type_of(c.dtype(), name), "optimiser state of a training checkpoint: dropped", c.nbytes(), 0};
        p.dropped = true;
        dropped.push_back(std::move(p));
        continue;
      }
      sources.push_back({name, gguf_type_of(c.dtype(), name),
                         std::vector<int64_t>(c.shape().rbegin(), c.shape().rend()),
                         static_cast<const uint8_t*>(c.raw_data()), c.nbytes(), layer_of(name)});
    }
    keep_alive = st;
  }
  std::stable_sort(sources.begin(), sources.end(), llama_tensor_order);
  QuantizeOptions resolved = options;
  if (!options.mix.empty()) {
    model.has_output = std::any_of(sources.begin(), sources.end(), [](const Source& s) { return s.name == "output.weight"; });
    if (model.n_layers == 0) model.n_layers = sources.empty() ? 0 : std::max<int64_t>(0, sources.back().layer + 1);
    // The rules run on the tensors llama-quantize quantizes, less those the user's overrides pick.
    std::vector<MixTensor> ruled;
    for (const Source& s : sources) {
      const bool manual = std::any_of(options.overrides.begin(), options.overrides.end(),
                                      [&](const TypeOverride& o) { return o.matches(s.name); });
      const bool encodable = is_float_type(s.type) || quant::is_block_type(s.type);
      if (!manual && encodable && keep_reason(s.name, s.ne.size()) == nullptr) {
        ruled.push_back({s.name, s.ne.empty() ? 1 : s.ne[0]});
      }
    }
    for (TypeOverride& o : llama_mix_overrides(options.mix, model, ruled)) resolved.overrides.push_back(std::move(o));
  }
  // Every tensor is planned before any is encoded, so a refusal (requantizing, an override that does
  // not fit) comes at once.
  std::vector<TensorPlan> plans;
  for (const Source& s : sources) {
    TensorPlan p;
    try {
      p = plan_tensor(s.name, s.ne, s.type, resolved);
    } catch (const Error& e) {
      fail("{}: {}", in, e.what());
    }
    p.bytes_in = s.nbytes;
    p.bytes_out = static_cast<uint64_t>(quant::row_bytes(p.to, s.ne.empty() ? 1 : s.ne[0]) * rows_of(s.ne));
    plans.push_back(std::move(p));
  }
  // As llama-quantize: the quantization version, then the file type, at the end of the metadata.
  writer.append("general.quantization_version", Value::u32(2));
  const bool base_written =
      std::any_of(plans.begin(), plans.end(), [&](const TensorPlan& p) { return p.to == options.type; });
  if (!options.mix.empty() && base_written) {
    writer.append("general.file_type", Value::u32(llama_mix_file_type(options.mix)));
  } else if (const std::optional<uint32_t> label = file_type_label(plans, options.type)) {
    writer.append("general.file_type", Value::u32(*label));
  } else {
    writer.remove("general.file_type");
  }

  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& s = sources[i];
    const TensorPlan& p = plans[i];
    const int64_t n = s.ne.empty() ? 1 : s.ne[0];
    const int64_t rows = rows_of(s.ne);
    if (p.to == s.type) {
      writer.add_tensor(s.name, s.type, s.ne, std::span<const uint8_t>(s.data, s.nbytes), keep_alive);
    } else {
      const std::vector<float> values = quant::dequantize(s.type, s.data, s.nbytes, rows, n);
      std::vector<uint8_t> bytes;
      try {
        bytes = encode_rows(p.to, values.data(), rows, n);
      } catch (const Error& e) {
        fail("{}: tensor '{}': {}", in, printable(s.name, 96), e.what());
      }
      writer.add_tensor(s.name, p.to, s.ne, std::move(bytes));
    }
    if (on_tensor) on_tensor(p, i, sources.size());
  }
  for (size_t i = 0; i < dropped.size(); ++i) {
    if (on_tensor) on_tensor(dropped[i], sources.size() + i, sources.size() + dropped.size());
  }
  writer.write(out);
  plans.insert(plans.end(), dropped.begin(), dropped.end());
  return plans;
}

}  // namespace tessera::io::gguf
