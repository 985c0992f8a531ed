#include "tessera/models/llm/hf_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "tessera/core/atomic_file.h"
#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/io/safetensors.h"
#include "tessera/quant/quantize.h"
#include "tessera/tokenizers/hf_vocab.h"
#include "tessera/tokenizers/synthetic_vocab.h"

namespace tessera::models::llm {

namespace {

using io::gguf::Value;
using nlohmann::json;
using quant::GgmlType;
namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

json read_json(const std::string& path) {
  const MappedFile file(path);
  try {
    return json::parse(reinterpret_cast<const char*>(file.data()),
                       reinterpret_cast<const char*>(file.data()) + file.size());
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", path, printable(e.what()));
  }
}

std::string shown(const json& j) {
  return printable(j.dump(), 120);
}

// config.json, with typed reads whose errors name the file and the key.
class Config {
 public:
  Config(json j, std::string path, std::string arch)
      : j_(std::move(j)), path_(std::move(path)), arch_(std::move(arch)) {}

  const std::string& path() const { return path_; }
  bool has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }
  const json& at(const char* key) const { return j_[key]; }

  // A positive integer: the first of `keys` present (aliases), else `fallback`, else an error.
  int64_t count(std::initializer_list<const char*> keys, std::optional<int64_t> fallback = std::nullopt) const {
    for (const char* key : keys) {
      if (!has(key)) continue;
      const json& v = j_[key];
      if (v.is_number_integer() && v.get<int64_t>() > 0 && v.get<int64_t>() <= (int64_t{1} << 31)) {
        return v.get<int64_t>();
      }
      fail("{}: key '{}' = {}: expected a positive integer", path_, key, shown(v));
    }
    if (fallback) return *fallback;
    fail("{}: missing key '{}' ({} needs it)", path_, *keys.begin(), arch_);
  }
  // A finite positive number, else `fallback`.
  double number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_[key];
    if (v.is_number() && v.get<double>() > 0 && std::isfinite(v.get<double>())) return v.get<double>();
    fail("{}: key '{}' = {}: expected a positive number", path_, key, shown(v));
  }
  bool flag(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (j_[key].is_boolean()) return j_[key].get<bool>();
    fail("{}: key '{}' = {}: expected true or false", path_, key, shown(j_[key]));
  }
  std::string text(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (j_[key].is_string()) return j_[key].get<std::string>();
    fail("{}: key '{}' = {}: expected a string", path_, key, shown(j_[key]));
  }
  // An integer token id, or nothing (absent, null, or a list as some configs give for eos).
  std::optional<int64_t> token_id(const char* key) const {
    if (has(key) && j_[key].is_number_integer() && j_[key].get<int64_t>() >= 0) return j_[key].get<int64_t>();
    return std::nullopt;
  }
  // Fails unless `key` is absent or `ok`.
  void refuse_unless(const char* key, bool ok, const std::string& why) const {
    if (has(key) && !ok) fail("{}: key '{}' = {} is not supported: {}", path_, key, shown(j_[key]), why);
  }

 private:
  json j_;
  std::string path_, arch_;
};

// The hyperparameters, as config.json gives them.
struct Hparams {
  Arch arch = Arch::llama;
  int64_t dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, ctx = 0;
  std::optional<int64_t> vocab;  // config.json's vocab_size (checked against the embedding's rows)
  bool head_dim_given = false;
  bool tie = false;
  double eps = 1e-5, rope_base = 10000.0;
  std::optional<int64_t> bos_id, eos_id;
};

Hparams read_gpt2_config(const Config& c) {
  Hparams h;
  h.arch = Arch::gpt2;
  h.dim = c.count({"n_embd", "hidden_size"});
  h.layers = c.count({"n_layer", "num_hidden_layers"});
  h.heads = c.count({"n_head", "num_attention_heads"});
  h.kv_heads = h.heads;
  h.ctx = c.count({"n_positions", "n_ctx", "max_position_embeddings"});
  h.ffn = c.count({"n_inner"}, 4 * h.dim);
  if (c.has("vocab_size")) h.vocab = c.count({"vocab_size"});
  h.eps = c.number("layer_norm_epsilon", 1e-5);
  h.tie = c.flag("tie_word_embeddings", true);
  const std::string act = c.text("activation_function", "gelu_new");
  c.refuse_unless("activation_function", act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast",
                  "Tessera's GPT-2 uses the tanh approximation of GELU (gelu_new, gelu_pytorch_tanh, gelu_fast)");
  c.refuse_unless("scale_attn_weights", c.flag("scale_attn_weights", true),
                  "attention must be scaled by 1/sqrt(head size)");
  c.refuse_unless("scale_attn_by_inverse_layer_idx", !c.flag("scale_attn_by_inverse_layer_idx", false),
                  "Tessera's GPT-2 does not scale attention by the layer index");
  if (h.dim % h.heads != 0) {
    fail("{}: n_embd = {} is not a multiple of n_head = {}", c.path(), h.dim, h.heads);
  }
  h.head_dim = h.dim / h.heads;
  h.bos_id = c.token_id("bos_token_id");
  h.eos_id = c.token_id("eos_token_id");
  return h;
}

Hparams read_llama_config(const Config& c) {
  Hparams h;
  h.arch = Arch::llama;
  h.dim = c.count({"hidden_size"});
  h.layers = c.count({"num_hidden_layers"});
  h.heads = c.count({"num_attention_heads"});
  h.kv_heads = c.count({"num_key_value_heads"}, h.heads);
  h.ffn = c.count({"intermediate_size"});
  h.ctx = c.count({"max_position_embeddings"}, 2048);
  if (c.has("vocab_size")) h.vocab = c.count({"vocab_size"});
  h.eps = c.number("rms_norm_eps", 1e-6);
  h.rope_base = c.number("rope_theta", 10000.0);
  h.tie = c.flag("tie_word_embeddings", false);
  c.refuse_unless("hidden_act", c.text("hidden_act", "silu") == "silu", "Tessera's Llama feed-forward is SiLU-gated");
  // rope_scaling (transformers 4) or rope_parameters (5): only the default, unscaled kind, whose
  // rope_theta (5 keeps it there) is the base.
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!c.has(key)) continue;
    const json& r = c.at(key);
    const auto kind = [&]() -> std::string {
      for (const char* k : {"rope_type", "type"}) {
        if (r.is_object() && r.contains(k) && r[k].is_string()) return r[k].get<std::string>();
      }
      return "";
    }();
    c.refuse_unless(key, r.is_object() && kind == "default",
                    "Tessera's Llama runs plain RoPE (no scaled or extended context)");
    if (r.contains("rope_theta")) {
      const json& t = r["rope_theta"];
      TESSERA_CHECK(t.is_number() && t.get<double>() > 0 && std::isfinite(t.get<double>()),
                    "{}: key '{}.rope_theta' = {}: expected a positive number", c.path(), key, shown(t));
      h.rope_base = t.get<double>();
    }
  }
  c.refuse_unless("attention_bias", !c.flag("attention_bias", false), "Tessera's Llama has no attention biases");
  c.refuse_unless("mlp_bias", !c.flag("mlp_bias", false), "Tessera's Llama has no feed-forward biases");
  if (h.heads % h.kv_heads != 0) {
    fail("{}: num_attention_heads = {} is not a multiple of num_key_value_heads = {}", c.path(), h.heads, h.kv_heads);
  }
  if (c.has("head_dim")) {
    h.head_dim = c.count({"head_dim"});
    h.head_dim_given = true;
  } else {
    if (h.dim % h.heads != 0) {
      fail("{}: hidden_size = {} is not a multiple of num_attention_heads = {} (and there is no head_dim)", c.path(),
           h.dim, h.heads);
    }
    h.head_dim = h.dim / h.heads;
  }
  if (h.head_dim % 2 != 0) fail("{}: the head size {} must be even for RoPE", c.path(), h.head_dim);
  h.bos_id = c.token_id("bos_token_id");
  h.eos_id = c.token_id("eos_token_id");
  return h;
}

// One safetensors file, mapped, with its validated header.
struct Shard {
  std::string path;
  std::unique_ptr<MappedFile> map;
  io::SafetensorsHeader header;
};

// The weight files of the folder: model.safetensors, else the shards of model.safetensors.index.json
// (each tensor checked to be in the file the index names), else model-*-of-*.safetensors.
std::vector<Shard> open_weights(const fs::path& folder) {
  std::vector<std::string> files;
  std::map<std::string, std::string> weight_map;  // tensor -> file, from the index
  const fs::path single = folder / "model.safetensors", index = folder / "model.safetensors.index.json";
  if (is_file(single)) {
    files.push_back(single.string());
  } else if (is_file(index)) {
    const json j = read_json(index.string());
    TESSERA_CHECK(j.is_object() && j.contains("weight_map") && j["weight_map"].is_object(),
                  "{}: expected an object with a \"weight_map\" object (tensor name -> shard file)", index.string());
    std::set<std::string> seen;
    for (const auto& [name, file] : j["weight_map"].items()) {
      TESSERA_CHECK(file.is_string(), "{}: weight_map[{}] = {}: expected a file name", index.string(),
                    printable_quoted(name, 96), shown(file));
      const std::string f = file.get<std::string>();
      TESSERA_CHECK(fs::path(f).filename() == fs::path(f) && !f.empty() && f != "." && f != "..",
                    "{}: weight_map[{}] = {}: expected a file name in the same folder", index.string(),
                    printable_quoted(name, 96), printable_quoted(f, 96));
      const std::string path = (folder / f).string();
      TESSERA_CHECK(is_file(path), "{}: weight_map[{}] names {}, which is missing", index.string(),
                    printable_quoted(name, 96), path);
      weight_map[name] = path;
      if (seen.insert(path).second) files.push_back(path);
    }
    TESSERA_CHECK(!files.empty(), "{}: weight_map is empty", index.string());
  } else {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("model-") && name.ends_with(".safetensors") && name.find("-of-") != std::string::npos &&
          is_file(entry.path())) {
        files.push_back(entry.path().string());
      }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      if (is_file(folder / "pytorch_model.bin") || is_file(folder / "pytorch_model.bin.index.json")) {
        fail(
            "{}: the weights are PyTorch pickles (pytorch_model.bin), which tessera convert does not read: save them "
            "as safetensors (model.save_pretrained(folder, safe_serialization=True))",
            folder.string());
      }
      fail("{}: no weights: expected model.safetensors, or model.safetensors.index.json and the shards it names",
           folder.string());
    }
  }
  std::vector<Shard> shards;
  for (const std::string& path : files) {
    Shard s;
    s.path = path;
    s.map = std::make_unique<MappedFile>(path);
    s.header = io::read_safetensors_header(s.map->data(), s.map->size(), fmt::format("safetensors file '{}'", path));
    shards.push_back(std::move(s));
  }
  for (const auto& [name, path] : weight_map) {
    const std::string& file = path;  // clang 14 cannot capture a structured binding
    const auto it = std::find_if(shards.begin(), shards.end(), [&](const Shard& s) { return s.path == file; });
    TESSERA_CHECK(it->header.tensors.count(name) == 1, "{}: weight_map puts tensor {} in {}, which does not hold it",
                  index.string(), printable_quoted(name, 96), path);
  }
  return shards;
}

struct Located {
  const Shard* shard = nullptr;
  const io::SafetensorsEntry* entry = nullptr;
};

enum class Transform { none, transpose, rope_rows };

// One GGUF tensor: where it comes from and how it is reshaped.
struct Job {
  std::string gguf, hf;
  Shape hf_shape;   // expected, row-major
  std::string why;  // the config keys behind hf_shape, for messages
  Transform transform = Transform::none;
  int64_t rope_heads = 0;
  Located src;
};

// The GGUF row-major shape a job produces.
Shape gguf_shape(const Job& j) {
  if (j.transform == Transform::transpose) return {j.hf_shape[1], j.hf_shape[0]};
  return j.hf_shape;
}

std::vector<int64_t> ne_of(const Shape& shape) {
  return std::vector<int64_t>(shape.rbegin(), shape.rend());
}

struct Plan {
  Hparams h;
  std::vector<Job> jobs;
  int64_t vocab = 0;
  bool tied = false;
};

class TensorIndex {
 public:
  explicit TensorIndex(const std::vector<Shard>& shards) {
    for (const Shard& s : shards) {
      for (const auto& [name, entry] : s.header.tensors) {
        const auto [it, fresh] = by_name_.emplace(name, Located{&s, &entry});
        TESSERA_CHECK(fresh, "tensor {} is in both {} and {}", printable_quoted(name, 96), it->second.shard->path,
                      s.path);
      }
    }
  }
  const Located* find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &it->second;
  }
  void use(const std::string& name) { used_.insert(name); }
  const std::map<std::string, Located>& all() const { return by_name_; }
  bool used(const std::string& name) const { return used_.count(name) != 0; }

 private:
  std::map<std::string, Located> by_name_;
  std::set<std::string> used_;
};

std::string files_of(const std::vector<Shard>& shards) {
  std::string out;
  for (const Shard& s : shards) out += (out.empty() ? "" : ", ") + s.path;
  return out;
}

// Looks up, checks the shape and dtype of, and records one tensor.
void locate(Job& job, TensorIndex& index, const std::vector<Shard>& shards) {
  const Located* l = index.find(job.hf);
  if (l == nullptr) {
    fail("{}: missing tensor {} (expected shape {}: {})", files_of(shards), printable_quoted(job.hf, 96),
         shape_str(job.hf_shape), job.why);
  }
  const io::SafetensorsEntry& e = *l->entry;
  if (e.shape != job.hf_shape) {
    fail("{}: tensor {} has shape {}, expected {} ({})", l->shard->path, printable_quoted(job.hf, 96),
         shape_str(e.shape), shape_str(job.hf_shape), job.why);
  }
  if (e.dtype != DType::f32 && e.dtype != DType::f16 && e.dtype != DType::bf16) {
    fail("{}: tensor {} is {}, expected F32, F16 or BF16", l->shard->path, printable_quoted(job.hf, 96),
         io::safetensors_dtype_name(e.dtype));
  }
  job.src = *l;
  index.use(job.hf);
}

// Rows of the token embedding (the vocabulary); its width must be the model's.
int64_t embedding_rows(const TensorIndex& index, const std::string& name, int64_t dim, const char* dim_key,
                       const std::vector<Shard>& shards) {
  const Located* l = index.find(name);
  if (l == nullptr) {
    fail("{}: missing tensor {} (the token embedding, [vocab_size, {}])", files_of(shards), printable_quoted(name, 96),
         dim_key);
  }
  const Shape& s = l->entry->shape;
  if (s.size() != 2 || s[1] != dim || s[0] < 1) {
    fail("{}: tensor {} has shape {}, expected [vocab_size, {}] ({} = {})", l->shard->path, printable_quoted(name, 96),
         shape_str(s), dim, dim_key, dim);
  }
  return s[0];
}

void check_vocab(const Hparams& h, const Config& c, int64_t rows, const std::string& embedding) {
  if (h.vocab && *h.vocab != rows) {
    fail("{}: vocab_size = {} but tensor {} has {} rows", c.path(), *h.vocab, printable_quoted(embedding, 96), rows);
  }
}

Plan plan_gpt2(const Hparams& h, const Config& c, TensorIndex& index, const std::vector<Shard>& shards) {
  Plan p;
  p.h = h;
  // GPT2LMHeadModel saves "transformer.*"; GPT2Model (and OpenAI's own upload) the bare names.
  const std::string pre =
      index.find("transformer.wte.weight") != nullptr || index.find("wte.weight") == nullptr ? "transformer." : "";
  p.vocab = embedding_rows(index, pre + "wte.weight", h.dim, "n_embd", shards);
  check_vocab(h, c, p.vocab, pre + "wte.weight");
  const int64_t d = h.dim, ff = h.ffn;
  const auto add = [&](std::string gguf, std::string hf, Shape shape, std::string why, Transform t = Transform::none) {
    p.jobs.push_back(Job{std::move(gguf), pre + hf, std::move(shape), std::move(why), t, 0, {}});
  };
  add("token_embd.weight", "wte.weight", {p.vocab, d}, "vocab_size, n_embd");
  add("position_embd.weight", "wpe.weight", {h.ctx, d}, "n_positions, n_embd");
  for (int64_t i = 0; i < h.layers; ++i) {
    const auto g = [i](const char* what) { return fmt::format("blk.{}.{}", i, what); };
    const auto f = [i](const char* what) { return fmt::format("h.{}.{}", i, what); };
    add(g("attn_norm.weight"), f("ln_1.weight"), {d}, "n_embd");
    add(g("attn_norm.bias"), f("ln_1.bias"), {d}, "n_embd");
    // Conv1D stores [in, out]; GGUF wants nn.Linear's [out, in].
    add(g("attn_qkv.weight"), f("attn.c_attn.weight"), {d, 3 * d}, "n_embd, 3 x n_embd: Conv1D [in, out]",
        Transform::transpose);
    add(g("attn_qkv.bias"), f("attn.c_attn.bias"), {3 * d}, "3 x n_embd");
    add(g("attn_output.weight"), f("attn.c_proj.weight"), {d, d}, "n_embd, n_embd", Transform::transpose);
    add(g("attn_output.bias"), f("attn.c_proj.bias"), {d}, "n_embd");
    add(g("ffn_norm.weight"), f("ln_2.weight"), {d}, "n_embd");
    add(g("ffn_norm.bias"), f("ln_2.bias"), {d}, "n_embd");
    add(g("ffn_up.weight"), f("mlp.c_fc.weight"), {d, ff}, "n_embd, n_inner: Conv1D [in, out]", Transform::transpose);
    add(g("ffn_up.bias"), f("mlp.c_fc.bias"), {ff}, "n_inner");
    add(g("ffn_down.weight"), f("mlp.c_proj.weight"), {ff, d}, "n_inner, n_embd: Conv1D [in, out]",
        Transform::transpose);
    add(g("ffn_down.bias"), f("mlp.c_proj.bias"), {d}, "n_embd");
  }
  add("output_norm.weight", "ln_f.weight", {d}, "n_embd");
  add("output_norm.bias", "ln_f.bias", {d}, "n_embd");
  p.tied = h.tie || index.find("lm_head.weight") == nullptr;
  if (!p.tied)
    p.jobs.push_back(
        Job{"output.weight", "lm_head.weight", {p.vocab, d}, "vocab_size, n_embd", Transform::none, 0, {}});
  for (Job& j : p.jobs) locate(j, index, shards);
  if (p.tied && index.find("lm_head.weight") != nullptr) index.use("lm_head.weight");  // tied: the same values
  return p;
}

Plan plan_llama(const Hparams& h, const Config& c, TensorIndex& index, const std::vector<Shard>& shards) {
  Plan p;
  p.h = h;
  // LlamaForCausalLM saves "model.*"; a bare LlamaModel the names without the prefix.
  const std::string pre =
      index.find("model.embed_tokens.weight") != nullptr || index.find("embed_tokens.weight") == nullptr ? "model."
                                                                                                         : "";
  p.vocab = embedding_rows(index, pre + "embed_tokens.weight", h.dim, "hidden_size", shards);
  check_vocab(h, c, p.vocab, pre + "embed_tokens.weight");
  const int64_t d = h.dim, q = h.heads * h.head_dim, kv = h.kv_heads * h.head_dim;
  const std::string q_why = fmt::format("num_attention_heads x head size = {} x {}, hidden_size", h.heads, h.head_dim);
  const std::string kv_why =
      fmt::format("num_key_value_heads x head size = {} x {}, hidden_size", h.kv_heads, h.head_dim);
  const auto add = [&](std::string gguf, std::string hf, Shape shape, std::string why, Transform t = Transform::none,
                       int64_t heads = 0) {
    p.jobs.push_back(Job{std::move(gguf), pre + hf, std::move(shape), std::move(why), t, heads, {}});
  };
  add("token_embd.weight", "embed_tokens.weight", {p.vocab, d}, "vocab_size, hidden_size");
  for (int64_t i = 0; i < h.layers; ++i) {
    const auto g = [i](const char* what) { return fmt::format("blk.{}.{}.weight", i, what); };
    const auto f = [i](const char* what) { return fmt::format("layers.{}.{}.weight", i, what); };
    add(g("attn_norm"), f("input_layernorm"), {d}, "hidden_size");
    add(g("attn_q"), f("self_attn.q_proj"), {q, d}, q_why, Transform::rope_rows, h.heads);
    add(g("attn_k"), f("self_attn.k_proj"), {kv, d}, kv_why, Transform::rope_rows, h.kv_heads);
    add(g("attn_v"), f("self_attn.v_proj"), {kv, d}, kv_why);
    add(g("attn_output"), f("self_attn.o_proj"), {d, q}, "hidden_size, num_attention_heads x head size");
    add(g("ffn_norm"), f("post_attention_layernorm"), {d}, "hidden_size");
    add(g("ffn_gate"), f("mlp.gate_proj"), {h.ffn, d}, "intermediate_size, hidden_size");
    add(g("ffn_up"), f("mlp.up_proj"), {h.ffn, d}, "intermediate_size, hidden_size");
    add(g("ffn_down"), f("mlp.down_proj"), {d, h.ffn}, "hidden_size, intermediate_size");
  }
  add("output_norm.weight", "norm.weight", {d}, "hidden_size");
  p.tied = h.tie || index.find("lm_head.weight") == nullptr;
  if (!p.tied)
    p.jobs.push_back(
        Job{"output.weight", "lm_head.weight", {p.vocab, d}, "vocab_size, hidden_size", Transform::none, 0, {}});
  for (Job& j : p.jobs) locate(j, index, shards);
  if (p.tied && index.find("lm_head.weight") != nullptr) index.use("lm_head.weight");
  return p;
}

// Buffers some checkpoints carry that are no weights: GPT-2's causal masks, Llama's RoPE frequencies.
bool ignorable(Arch arch, const std::string& name) {
  if (arch == Arch::gpt2) return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias");
  return name.ends_with(".rotary_emb.inv_freq");
}

void check_nothing_left(const TensorIndex& index, Arch arch) {
  for (const auto& [name, where] : index.all()) {
    if (index.used(name) || ignorable(arch, name)) continue;
    fail("{}: tensor {} is not part of a {} model as tessera convert maps it ({})", where.shard->path,
         printable_quoted(name, 96), arch_name(arch),
         arch == Arch::gpt2 ? "expected [transformer.]wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, "
                              "mlp.c_proj}, ln_f and lm_head"
                            : "expected [model.]embed_tokens, layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj, "
                              "post_attention_layernorm, mlp.{gate,up,down}_proj}, norm and lm_head");
  }
}

GgmlType ggml_type_of(DType dt) {
  return dt == DType::f32 ? GgmlType::f32 : dt == DType::f16 ? GgmlType::f16 : GgmlType::bf16;
}

// The tensor's values in f32, in the GGUF row-major layout.
std::vector<float> values_of(const Job& j) {
  const io::SafetensorsEntry& e = *j.src.entry;
  const int64_t cols = e.shape.size() == 2 ? e.shape[1] : e.shape[0];
  const int64_t rows = e.shape.size() == 2 ? e.shape[0] : 1;
  std::vector<float> v =
      quant::dequantize(ggml_type_of(e.dtype), j.src.shard->map->data() + e.offset, e.nbytes, rows, cols);
  if (j.transform == Transform::transpose) {
    std::vector<float> t(v.size());
    constexpr int64_t kTile = 32;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r) {
          for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c) {
            t[static_cast<size_t>(c * rows + r)] = v[static_cast<size_t>(r * cols + c)];
          }
        }
      }
    }
    return t;
  }
  if (j.transform == Transform::rope_rows) {
    const std::vector<int64_t> order = hf_to_gguf_rope_rows(j.rope_heads, rows / j.rope_heads);
    std::vector<float> t(v.size());
    for (int64_t r = 0; r < rows; ++r) {
      std::copy_n(v.begin() + order[static_cast<size_t>(r)] * cols, cols, t.begin() + r * cols);
    }
    return t;
  }
  return v;
}

void write_hyperparameters(io::gguf::Writer& w, const Plan& p, const std::string& name) {
  const Hparams& h = p.h;
  const std::string a = arch_name(h.arch);
  const auto count = [&](const char* key, int64_t v) {
    w.set(fmt::format("{}.{}", a, key), Value::u32(static_cast<uint64_t>(v)));
  };
  w.set("general.architecture", Value::string(a));
  w.set("general.name", Value::string(name));
  count("context_length", h.ctx);
  count("embedding_length", h.dim);
  count("block_count", h.layers);
  count("feed_forward_length", h.ffn);
  count("attention.head_count", h.heads);
  count("vocab_size", p.vocab);
  if (h.arch == Arch::llama) {
    count("attention.head_count_kv", h.kv_heads);
    count("rope.dimension_count", h.head_dim);
    if (h.head_dim_given) {
      count("attention.key_length", h.head_dim);
      count("attention.value_length", h.head_dim);
    }
    w.set(a + ".rope.freq_base", Value::f32(static_cast<float>(h.rope_base)));
    w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(static_cast<float>(h.eps)));
  } else {
    w.set(a + ".attention.layer_norm_epsilon", Value::f32(static_cast<float>(h.eps)));
  }
}

LlmConfig config_of(const Plan& p) {
  LlmConfig c;
  c.arch = p.h.arch;
  c.n_embd = p.h.dim;
  c.n_layer = p.h.layers;
  c.n_head = p.h.heads;
  c.n_head_kv = p.h.kv_heads;
  c.head_dim = p.h.head_dim;
  c.n_ff = p.h.ffn;
  c.n_ctx = p.h.ctx;
  c.n_vocab = p.vocab;
  c.n_rot = p.h.arch == Arch::llama ? p.h.head_dim : 0;
  c.rope_freq_base = p.h.rope_base;
  c.norm_eps = p.h.eps;
  return c;
}

}  // namespace

std::vector<int64_t> hf_to_gguf_rope_rows(int64_t n_heads, int64_t head_dim) {
  TESSERA_CHECK(n_heads > 0 && head_dim > 0 && head_dim % 2 == 0,
                "hf_to_gguf_rope_rows: {} heads of {} rows (the head size must be even)", n_heads, head_dim);
  std::vector<int64_t> rows(static_cast<size_t>(n_heads * head_dim));
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t j = 0; j < half; ++j) {
      for (int64_t s = 0; s < 2; ++s) rows[static_cast<size_t>(h * head_dim + 2 * j + s)] = h * head_dim + s * half + j;
    }
  }
  return rows;
}

HfConvertResult convert_hf_model(const std::string& folder_arg, const std::string& out, const HfConvertOptions& options,
                                 const std::function<void(const io::gguf::TensorPlan&, size_t, size_t)>& on_tensor) {
  io::gguf::QuantizeOptions q = io::gguf::options_for_type(options.type);  // an unknown type fails before any work
  const fs::path folder = fs::path(folder_arg);
  {
    std::error_code ec;
    TESSERA_CHECK(fs::is_directory(folder, ec),
                  "{}: not a folder (expected a Hugging Face model folder with config.json)", folder_arg);
  }
  const fs::path config_path = folder / "config.json";
  TESSERA_CHECK(is_file(config_path), "{}: missing (a Hugging Face model folder has a config.json)",
                config_path.string());
  json config_json = read_json(config_path.string());
  TESSERA_CHECK(config_json.is_object(), "{}: expected a JSON object", config_path.string());
  const std::string model_type = config_json.contains("model_type") && config_json["model_type"].is_string()
                                     ? config_json["model_type"].get<std::string>()
                                     : "";
  TESSERA_CHECK(!model_type.empty(), "{}: missing key 'model_type' (expected \"gpt2\" or \"llama\")",
                config_path.string());
  if (model_type != "gpt2" && model_type != "llama") {
    fail("{}: model_type {} is not supported; tessera convert converts gpt2 and llama", config_path.string(),
         printable_quoted(model_type, 48));
  }
  const Config config(std::move(config_json), config_path.string(), model_type);
  const Hparams h = model_type == "gpt2" ? read_gpt2_config(config) : read_llama_config(config);

  const std::vector<Shard> shards = open_weights(folder);
  TensorIndex index(shards);
  const Plan plan = h.arch == Arch::gpt2 ? plan_gpt2(h, config, index, shards) : plan_llama(h, config, index, shards);
  check_nothing_left(index, h.arch);

  tokenizers::HfVocabOptions vo;
  vo.family = model_type;
  vo.n_vocab = plan.vocab;
  vo.bos_id = h.bos_id;
  vo.eos_id = h.eos_id;
  const tokenizers::HfVocab vocab = tokenizers::vocab_from_hf(folder.string(), vo);

  std::string name = options.name;
  if (name.empty()) name = fs::absolute(folder).lexically_normal().filename().string();
  if (name.empty()) name = fs::absolute(folder).lexically_normal().parent_path().filename().string();
  io::gguf::Writer w;
  write_hyperparameters(w, plan, name);
  tokenizers::write_vocab(w, vocab.vocab);

  // The same per-tensor rules as tessera quantize: the user's overrides, then the mix's.
  for (const io::gguf::TypeOverride& o : options.overrides) q.overrides.push_back(o);
  for (auto& o : io::gguf::mix_overrides(q.mix, h.layers, !plan.tied)) q.overrides.push_back(std::move(o));
  HfConvertResult result;
  for (const Job& j : plan.jobs) {
    const std::vector<int64_t> ne = ne_of(gguf_shape(j));
    io::gguf::TensorPlan tp = io::gguf::plan_tensor(j.gguf, ne, GgmlType::f32, q);
    tp.bytes_in = j.src.entry->nbytes;
    tp.bytes_out = static_cast<uint64_t>(quant::row_bytes(tp.to, ne[0]) * (ne.size() == 2 ? ne[1] : 1));
    result.plans.push_back(std::move(tp));
  }
  w.set("general.quantization_version", Value::u32(2));
  if (const auto label = io::gguf::file_type_label(result.plans, q.type))
    w.set("general.file_type", Value::u32(*label));

  for (size_t i = 0; i < plan.jobs.size(); ++i) {
    const Job& j = plan.jobs[i];
    const io::gguf::TensorPlan& tp = result.plans[i];
    const std::vector<float> values = values_of(j);
    const int64_t cols = tp.ne[0], rows = tp.ne.size() == 2 ? tp.ne[1] : 1;
    std::vector<uint8_t> bytes;
    try {
      bytes = io::gguf::encode_rows(tp.to, values.data(), rows, cols);
    } catch (const Error& e) {
      fail("{}: tensor {} as {}: {}", j.src.shard->path, printable_quoted(j.hf, 96), quant::type_name(tp.to), e.what());
    }
    w.add_tensor(tp.name, tp.to, tp.ne, std::move(bytes));
    if (on_tensor) on_tensor(tp, i, plan.jobs.size());
  }
  w.write(out);

  result.config = config_of(plan);
  result.tied = plan.tied;
  result.tokenizer = vocab.source;
  for (const Shard& s : shards) result.weight_files.push_back(s.path);
  return result;
}

}  // namespace tessera::models::llm
