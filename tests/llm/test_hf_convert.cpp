// tessera convert's library side (models/llm/hf_convert.h): small Hugging Face folders (config.json,
// safetensors written by Tessera's own writer, tokenizer files) for GPT-2 and for Llama with grouped-
// query attention, tied and untied, single-file and sharded, f32 and bf16, are converted and loaded.
// Checked: (a) every GGUF tensor equals its HF tensor after the expected transposition (GPT-2's Conv1D)
// or q/k row permutation (Llama); (b) the logits of the converted model equal a reference forward
// written here with Tessera ops directly on the HF-layout weights (HF's own definitions: Conv1D
// products, and for Llama rotate_half RoPE on the unpermuted q/k, which is what proves the permutation
// right) within 1e-4 relative in f32; (c) the tokenizers (byte-level BPE from vocab.json + merges.txt
// and from a Llama 3 style tokenizer.json, SentencePiece-style BPE from tokenizer.json) encode as HF's
// BPE does; (d) every error names the file, the key or tensor, and leaves no output behind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "tessera/core/error.h"
#include "tessera/core/temp_file.h"
#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/safetensors.h"
#include "tessera/models/llm/hf_convert.h"
#include "tessera/models/llm/llm_model.h"
#include "tessera/ops/ops.h"
#include "tessera/quant/quantize.h"
#include "tessera/tokenizers/byte_unicode.h"
#include "tessera/tokenizers/tokenizer.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::models::llm;
using nlohmann::json;

namespace {

struct HfTempDir {
  std::string path = create_temp_directory(std::filesystem::temp_directory_path() / "tessera-hf-convert");
  ~HfTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string sub(const std::string& name) const {
    const std::string p = path + "/" + name;
    std::filesystem::create_directories(p);
    return p;
  }
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}
void write_json(const std::string& path, const json& j) {
  write_text(path, j.dump(1));
}

using Tensors = std::map<std::string, Array>;  // HF names, f32 values (what the file holds, decoded)

Array random_f32(std::mt19937& rng, const Shape& shape, float scale, float offset = 0.0f) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Array a = Array::empty(DType::f32, shape);
  float* p = a.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = offset + scale * normal(rng);
  return a;
}

// Writes `t` as safetensors in `dtype` (one file, or two shards and an index), and returns the values
// the files hold, decoded to f32.
Tensors save_weights(const std::string& dir, const Tensors& t, DType dtype, bool sharded) {
  Tensors held;
  StateDict all;
  for (const auto& [name, a] : t) {
    const Array stored = a.astype(dtype);
    held[name] = stored.astype(DType::f32);
    all.emplace(name, stored);
  }
  if (!sharded) {
    io::save_safetensors(dir + "/model.safetensors", all);
    return held;
  }
  const auto middle = std::next(all.begin(), static_cast<std::ptrdiff_t>(all.size() / 2));
  const StateDict first(all.begin(), middle), second(middle, all.end());
  io::save_safetensors(dir + "/model-00001-of-00002.safetensors", first);
  io::save_safetensors(dir + "/model-00002-of-00002.safetensors", second);
  json map = json::object();
  for (const auto& [n, a] : first) map[n] = "model-00001-of-00002.safetensors";
  for (const auto& [n, a] : second) map[n] = "model-00002-of-00002.safetensors";
  write_json(dir + "/model.safetensors.index.json", {{"metadata", {{"total_size", 0}}}, {"weight_map", map}});
  return held;
}

// --- tokenizers --------------------------------------------------------------------------------------

// A byte-level vocabulary: the 256 byte symbols in byte order, then the results of `merges`.
struct ByteLevel {
  json vocab = json::object();
  std::vector<std::string> merges;
  int64_t size = 0;
};
ByteLevel byte_level_vocab() {
  ByteLevel b;
  for (int i = 0; i < 256; ++i) b.vocab[tokenizers::byte_to_unicode(static_cast<unsigned char>(i))] = b.size++;
  const std::string G = tokenizers::byte_to_unicode(' ');  // "Ġ"
  for (const auto& [l, r] : std::vector<std::pair<std::string, std::string>>{{"h", "e"},
                                                                             {"l", "l"},
                                                                             {"he", "ll"},
                                                                             {"hell", "o"},
                                                                             {G, "w"},
                                                                             {"o", "r"},
                                                                             {G + "w", "or"},
                                                                             {G + "wor", "l"},
                                                                             {G + "worl", "d"}}) {
    b.merges.push_back(l + " " + r);
    b.vocab[l + r] = b.size++;
  }
  return b;  // "hello" = 259, "Ġworld" = 264
}

// GPT-2's slow-tokenizer files: vocab.json (<|endoftext|> last) and merges.txt.
void write_gpt2_tokenizer(const std::string& dir) {
  ByteLevel b = byte_level_vocab();
  b.vocab["<|endoftext|>"] = b.size++;  // 265
  write_json(dir + "/vocab.json", b.vocab);
  std::string merges = "#version: 0.2\n";
  for (const std::string& m : b.merges) merges += m + "\n";
  write_text(dir + "/merges.txt", merges);
}

constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// A TemplateProcessing post-processor that puts `bos` before the text.
json template_processing(const std::string& bos) {
  json special = json::object();
  special["SpecialToken"] = {{"id", bos}, {"type_id", 0}};
  json text = json::object();
  text["Sequence"] = {{"id", "A"}, {"type_id", 0}};
  json t = {{"type", "TemplateProcessing"}};
  t["single"] = json::array({special, text});
  return t;
}

// A Llama 3 style tokenizer.json: byte-level BPE after the Llama 3 split, BOS added by the template.
void write_llama3_tokenizer(const std::string& dir) {
  ByteLevel b = byte_level_vocab();
  json merges = json::array();
  for (const std::string& m : b.merges)
    merges.push_back(json::array({m.substr(0, m.find(' ')), m.substr(m.find(' ') + 1)}));
  json split = {{"type", "Split"}, {"behavior", "Isolated"}, {"invert", false}};
  split["pattern"] = {{"Regex", kLlama3Pattern}};
  const json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
  json root = json::object();
  root["version"] = "1.0";
  root["added_tokens"] = json::array({json{{"id", 265}, {"content", "<|begin_of_text|>"}, {"special", true}},
                                      json{{"id", 266}, {"content", "<|end_of_text|>"}, {"special", true}}});
  root["normalizer"] = nullptr;
  root["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", json::array({split, byte_level})}};
  root["post_processor"] = template_processing("<|begin_of_text|>");
  root["decoder"] = {{"type", "ByteLevel"}};
  json model = {{"type", "BPE"}, {"dropout", nullptr}, {"byte_fallback", false}, {"ignore_merges", true}};
  model["vocab"] = b.vocab;
  model["merges"] = merges;
  root["model"] = model;
  write_json(dir + "/tokenizer.json", root);
}

const std::string kSpace = "\xE2\x96\x81";  // "▁"

// A SentencePiece-style tokenizer.json as LlamaTokenizerFast saves it: BPE with byte_fallback,
// <unk> <s> </s>, the 256 byte tokens, then pieces; "▁hello" = 271, "▁world" = 276.
void write_spm_tokenizer(const std::string& dir, bool with_config = true) {
  json vocab = json::object();
  int64_t n = 0;
  for (const char* t : {"<unk>", "<s>", "</s>"}) vocab[t] = n++;
  for (int i = 0; i < 256; ++i) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", i);
    vocab[hex] = n++;
  }
  for (const std::string& t : {kSpace, std::string("h"), std::string("e"), std::string("l"), std::string("o"),
                               std::string("w"), std::string("r"), std::string("d")}) {
    vocab[t] = n++;
  }
  json merges = json::array();
  for (const auto& [l, r] : std::vector<std::pair<std::string, std::string>>{{"h", "e"},
                                                                             {"l", "l"},
                                                                             {"he", "ll"},
                                                                             {"hell", "o"},
                                                                             {kSpace, "hello"},
                                                                             {"o", "r"},
                                                                             {kSpace, "w"},
                                                                             {kSpace + "w", "or"},
                                                                             {"l", "d"},
                                                                             {kSpace + "wor", "ld"}}) {
    merges.push_back(l + " " + r);
    vocab[l + r] = n++;
  }
  const auto added = [](int id, const char* text) {
    return json{{"id", id},        {"content", text},     {"single_word", false}, {"lstrip", false},
                {"rstrip", false}, {"normalized", false}, {"special", true}};
  };
  json root = json::object();
  root["version"] = "1.0";
  root["added_tokens"] = json::array({added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")});
  json normalizers = json::array();
  normalizers.push_back({{"type", "Prepend"}, {"prepend", kSpace}});
  json replace = {{"type", "Replace"}, {"content", kSpace}};
  replace["pattern"] = {{"String", " "}};
  normalizers.push_back(replace);
  root["normalizer"] = {{"type", "Sequence"}, {"normalizers", normalizers}};
  root["pre_tokenizer"] = nullptr;
  root["post_processor"] = template_processing("<s>");
  root["decoder"] = {{"type", "ByteFallback"}};
  json model = {
      {"type", "BPE"}, {"dropout", nullptr}, {"unk_token", "<unk>"}, {"fuse_unk", true}, {"byte_fallback", true}};
  model["vocab"] = vocab;
  model["merges"] = merges;
  root["model"] = model;
  write_json(dir + "/tokenizer.json", root);
  if (with_config) {
    write_json(dir + "/tokenizer_config.json", {{"add_bos_token", true},
                                                {"add_eos_token", false},
                                                {"bos_token", "<s>"},
                                                {"eos_token", "</s>"},
                                                {"unk_token", "<unk>"},
                                                {"tokenizer_class", "LlamaTokenizer"}});
  }
}

// --- models ------------------------------------------------------------------------------------------

struct Gpt2Spec {
  int64_t dim = 32, layers = 2, heads = 4, ffn = 48, vocab = 268, ctx = 32;
  DType dtype = DType::f32;
};

// transformer.* names, Conv1D weights [in, out], no lm_head (tied, as save_pretrained drops it).
Tensors gpt2_tensors(const Gpt2Spec& s, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  const float ws = 1.0f / std::sqrt(static_cast<float>(s.dim));
  Tensors t;
  t["transformer.wte.weight"] = random_f32(rng, {s.vocab, s.dim}, 0.5f);
  t["transformer.wpe.weight"] = random_f32(rng, {s.ctx, s.dim}, 0.3f);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string h = "transformer.h." + std::to_string(i) + ".";
    t[h + "ln_1.weight"] = random_f32(rng, {s.dim}, 0.1f, 1.0f);
    t[h + "ln_1.bias"] = random_f32(rng, {s.dim}, 0.1f);
    t[h + "attn.c_attn.weight"] = random_f32(rng, {s.dim, 3 * s.dim}, ws);
    t[h + "attn.c_attn.bias"] = random_f32(rng, {3 * s.dim}, 0.1f);
    t[h + "attn.c_proj.weight"] = random_f32(rng, {s.dim, s.dim}, ws);
    t[h + "attn.c_proj.bias"] = random_f32(rng, {s.dim}, 0.1f);
    t[h + "ln_2.weight"] = random_f32(rng, {s.dim}, 0.1f, 1.0f);
    t[h + "ln_2.bias"] = random_f32(rng, {s.dim}, 0.1f);
    t[h + "mlp.c_fc.weight"] = random_f32(rng, {s.dim, s.ffn}, ws);
    t[h + "mlp.c_fc.bias"] = random_f32(rng, {s.ffn}, 0.1f);
    t[h + "mlp.c_proj.weight"] = random_f32(rng, {s.ffn, s.dim}, 1.0f / std::sqrt(static_cast<float>(s.ffn)));
    t[h + "mlp.c_proj.bias"] = random_f32(rng, {s.dim}, 0.1f);
  }
  t["transformer.ln_f.weight"] = random_f32(rng, {s.dim}, 0.1f, 1.0f);
  t["transformer.ln_f.bias"] = random_f32(rng, {s.dim}, 0.1f);
  return t;
}

json gpt2_config(const Gpt2Spec& s) {
  return {{"architectures", {"GPT2LMHeadModel"}},
          {"model_type", "gpt2"},
          {"n_embd", s.dim},
          {"n_layer", s.layers},
          {"n_head", s.heads},
          {"n_positions", s.ctx},
          {"n_ctx", s.ctx},
          {"n_inner", s.ffn},
          {"vocab_size", s.vocab},
          {"layer_norm_epsilon", 1e-5},
          {"activation_function", "gelu_new"},
          {"bos_token_id", 265},
          {"eos_token_id", 265},
          {"tie_word_embeddings", true}};
}

// A GPT-2 folder; returns the weights it holds.
Tensors make_gpt2(const std::string& dir, const Gpt2Spec& s = {}) {
  write_json(dir + "/config.json", gpt2_config(s));
  write_gpt2_tokenizer(dir);
  return save_weights(dir, gpt2_tensors(s), s.dtype, false);
}

struct LlamaSpec {
  int64_t dim = 32, layers = 2, heads = 4, kv_heads = 2, head_dim = 8, ffn = 48, vocab = 280, ctx = 64;
  bool tied = false;
  bool head_dim_key = false;  // write head_dim to config.json
  DType dtype = DType::f32;
  bool sharded = false;
  double rope_theta = 10000.0;
  float qk_scale = 3.0f;  // of q/k weights over 1/sqrt(dim): sharper attention makes RoPE matter more
};

Tensors llama_tensors(const LlamaSpec& s, uint32_t seed = 2) {
  std::mt19937 rng(seed);
  const float ws = 1.0f / std::sqrt(static_cast<float>(s.dim));
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  Tensors t;
  t["model.embed_tokens.weight"] = random_f32(rng, {s.vocab, s.dim}, 0.5f);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    t[l + "input_layernorm.weight"] = random_f32(rng, {s.dim}, 0.1f, 1.0f);
    t[l + "self_attn.q_proj.weight"] = random_f32(rng, {q, s.dim}, s.qk_scale * ws);
    t[l + "self_attn.k_proj.weight"] = random_f32(rng, {kv, s.dim}, s.qk_scale * ws);
    t[l + "self_attn.v_proj.weight"] = random_f32(rng, {kv, s.dim}, ws);
    t[l + "self_attn.o_proj.weight"] = random_f32(rng, {s.dim, q}, 1.0f / std::sqrt(static_cast<float>(q)));
    t[l + "post_attention_layernorm.weight"] = random_f32(rng, {s.dim}, 0.1f, 1.0f);
    t[l + "mlp.gate_proj.weight"] = random_f32(rng, {s.ffn, s.dim}, ws);
    t[l + "mlp.up_proj.weight"] = random_f32(rng, {s.ffn, s.dim}, ws);
    t[l + "mlp.down_proj.weight"] = random_f32(rng, {s.dim, s.ffn}, 1.0f / std::sqrt(static_cast<float>(s.ffn)));
  }
  t["model.norm.weight"] = random_f32(rng, {s.dim}, 0.1f, 1.0f);
  if (!s.tied) t["lm_head.weight"] = random_f32(rng, {s.vocab, s.dim}, ws);
  return t;
}

json llama_config(const LlamaSpec& s) {
  json c = {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"hidden_size", s.dim},
            {"num_hidden_layers", s.layers},
            {"num_attention_heads", s.heads},
            {"num_key_value_heads", s.kv_heads},
            {"intermediate_size", s.ffn},
            {"max_position_embeddings", s.ctx},
            {"rms_norm_eps", 1e-5},
            {"rope_theta", s.rope_theta},
            {"vocab_size", s.vocab},
            {"hidden_act", "silu"},
            {"rope_scaling", nullptr},
            {"attention_bias", false},
            {"mlp_bias", false},
            {"tie_word_embeddings", s.tied},
            {"bos_token_id", 1},
            {"eos_token_id", 2},
            {"torch_dtype", "float32"}};
  if (s.head_dim_key) c["head_dim"] = s.head_dim;
  return c;
}

Tensors make_llama(const std::string& dir, const LlamaSpec& s = {}) {
  write_json(dir + "/config.json", llama_config(s));
  write_spm_tokenizer(dir);
  return save_weights(dir, llama_tensors(s), s.dtype, s.sharded);
}

// --- the reference forwards, on HF-layout weights ------------------------------------------------------

Tensor w_of(const Tensors& t, const std::string& name) {
  const auto it = t.find(name);
  EXPECT_NE(it, t.end()) << name;
  return Tensor(it->second);
}

Tensor causal_mask(int64_t n) {
  std::vector<float> m(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) m[static_cast<size_t>(i * n + j)] = j <= i ? 0.0f : -1e30f;
  return Tensor::from_vector(m, {n, n});
}

// Multi-head causal attention of q [n, H, hd] over k, v [n, Hkv, hd] (head h reads kv head h / (H / Hkv)).
Tensor attention(const Tensor& q, Tensor k, Tensor v) {
  const int64_t n = q.dim(0), heads = q.dim(1), hd = q.dim(2), kv_heads = k.dim(1);
  if (kv_heads != heads) {
    std::vector<int64_t> pick;
    for (int64_t h = 0; h < heads; ++h) pick.push_back(h / (heads / kv_heads));
    const Tensor index = Tensor::from_vector(pick, {heads});
    k = ops::index_select(k, 1, index);
    v = ops::index_select(v, 1, index);
  }
  const Tensor qh = ops::permute(q, {1, 0, 2}), kh = ops::permute(k, {1, 2, 0}), vh = ops::permute(v, {1, 0, 2});
  const Tensor scores = ops::matmul(qh, kh) * (1.0 / std::sqrt(static_cast<double>(hd))) + causal_mask(n);
  const Tensor o = ops::matmul(ops::softmax(scores, -1), vh);  // [H, n, hd]
  return ops::reshape(ops::permute(o, {1, 0, 2}), {n, heads * hd});
}

// `prefix`: "transformer." or "" (GPT2Model's bare names); `head`: the lm_head (default: wte, tied).
Tensor gpt2_reference(const Tensors& t, const Gpt2Spec& s, const std::vector<int64_t>& ids,
                      const std::string& prefix = "transformer.", const std::string& head = "") {
  const auto n = static_cast<int64_t>(ids.size());
  const Tensor tok = Tensor::from_vector(ids, {n});
  const Tensor pos = ops::arange(n);
  const Shape norm{s.dim};
  const auto w = [&](const std::string& name) { return w_of(t, prefix + name); };
  Tensor x = ops::embedding(w("wte.weight"), tok) + ops::embedding(w("wpe.weight"), pos);
  const int64_t hd = s.dim / s.heads;
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    // Conv1D: x @ W [in, out] + b.
    const Tensor a = ops::layer_norm(x, norm, w(h + "ln_1.weight"), w(h + "ln_1.bias"), 1e-5);
    const Tensor qkv = ops::matmul(a, w(h + "attn.c_attn.weight")) + w(h + "attn.c_attn.bias");
    const auto part = [&](int64_t k) {
      return ops::reshape(ops::slice(qkv, 1, k * s.dim, (k + 1) * s.dim), {n, s.heads, hd});
    };
    const Tensor o = attention(part(0), part(1), part(2));
    x = x + ops::matmul(o, w(h + "attn.c_proj.weight")) + w(h + "attn.c_proj.bias");
    const Tensor f = ops::layer_norm(x, norm, w(h + "ln_2.weight"), w(h + "ln_2.bias"), 1e-5);
    const Tensor up = ops::gelu(ops::matmul(f, w(h + "mlp.c_fc.weight")) + w(h + "mlp.c_fc.bias"), true);
    x = x + ops::matmul(up, w(h + "mlp.c_proj.weight")) + w(h + "mlp.c_proj.bias");
  }
  x = ops::layer_norm(x, norm, w("ln_f.weight"), w("ln_f.bias"), 1e-5);
  return ops::matmul(x, ops::transpose(head.empty() ? w("wte.weight") : w_of(t, head)));
}

enum class Rope { rotate_half, pairs };

// HF's apply_rotary_pos_emb: x * cos + rotate_half(x) * sin, with cos/sin of pos * theta^(-2j/hd)
// repeated over both halves; `pairs` instead rotates (x[2j], x[2j+1]) (GGUF's convention: used only to
// show the test tells the two apart).
Tensor rope(const Tensor& x, int64_t n, int64_t hd, double theta, Rope style) {
  const int64_t half = hd / 2;
  std::vector<float> c(static_cast<size_t>(n * hd)), s(static_cast<size_t>(n * hd));
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t i = 0; i < hd; ++i) {
      const int64_t j = style == Rope::rotate_half ? i % half : i / 2;
      const double angle =
          static_cast<double>(p) * std::pow(theta, -2.0 * static_cast<double>(j) / static_cast<double>(hd));
      c[static_cast<size_t>(p * hd + i)] = static_cast<float>(std::cos(angle));
      s[static_cast<size_t>(p * hd + i)] = static_cast<float>(std::sin(angle));
    }
  }
  const Tensor cos = ops::reshape(Tensor::from_vector(c, {n, hd}), {n, 1, hd});
  const Tensor sin = ops::reshape(Tensor::from_vector(s, {n, hd}), {n, 1, hd});
  Tensor rotated;
  if (style == Rope::rotate_half) {
    rotated = ops::concat({ops::neg(ops::slice(x, 2, half, hd)), ops::slice(x, 2, 0, half)}, 2);
  } else {
    const int64_t heads = x.dim(1);
    const Tensor pairs = ops::reshape(x, {n, heads, half, 2});
    const Tensor even = ops::slice(pairs, 3, 0, 1), odd = ops::slice(pairs, 3, 1, 2);
    rotated = ops::reshape(ops::concat({ops::neg(odd), even}, 3), {n, heads, hd});
  }
  return x * cos + rotated * sin;
}

Tensor llama_reference(const Tensors& t, const LlamaSpec& s, const std::vector<int64_t>& ids,
                       Rope style = Rope::rotate_half) {
  const auto n = static_cast<int64_t>(ids.size());
  const Tensor tok = Tensor::from_vector(ids, {n});
  const Shape norm{s.dim};
  const auto w = [&](const std::string& name) { return w_of(t, name); };
  const auto linear = [](const Tensor& x, const Tensor& weight) { return ops::matmul(x, ops::transpose(weight)); };
  Tensor x = ops::embedding(w("model.embed_tokens.weight"), tok);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    const Tensor h = ops::rms_norm(x, norm, w(l + "input_layernorm.weight"), 1e-5);
    const Tensor q = rope(ops::reshape(linear(h, w(l + "self_attn.q_proj.weight")), {n, s.heads, s.head_dim}), n,
                          s.head_dim, s.rope_theta, style);
    const Tensor k = rope(ops::reshape(linear(h, w(l + "self_attn.k_proj.weight")), {n, s.kv_heads, s.head_dim}), n,
                          s.head_dim, s.rope_theta, style);
    const Tensor v = ops::reshape(linear(h, w(l + "self_attn.v_proj.weight")), {n, s.kv_heads, s.head_dim});
    x = x + linear(attention(q, k, v), w(l + "self_attn.o_proj.weight"));
    const Tensor f = ops::rms_norm(x, norm, w(l + "post_attention_layernorm.weight"), 1e-5);
    x = x + linear(ops::silu(linear(f, w(l + "mlp.gate_proj.weight"))) * linear(f, w(l + "mlp.up_proj.weight")),
                   w(l + "mlp.down_proj.weight"));
  }
  x = ops::rms_norm(x, norm, w("model.norm.weight"), 1e-5);
  return linear(x, w(s.tied ? "model.embed_tokens.weight" : "lm_head.weight"));
}

// max |a - b| / max |b|.
double relative_error(const Array& a, const Array& b) {
  const std::vector<double> x = a.to_f64(), y = b.to_f64();
  EXPECT_EQ(x.size(), y.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    diff = std::max(diff, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return diff / scale;
}

Array converted_logits(const std::string& gguf, const std::vector<int64_t>& ids) {
  const LlmModel model = LlmModel::load(gguf);
  const auto n = static_cast<int64_t>(ids.size());
  return model.forward(Tensor::from_vector(ids, {n}), ops::arange(n)).array().astype(DType::f32);
}

// A GGUF tensor decoded to f32, row-major [rows, cols] (ne reversed).
Array gguf_values(const io::gguf::Reader& r, const std::string& name) {
  const io::gguf::TensorInfo* t = r.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return Array();
  const int64_t cols = t->ne[0], rows = t->ne.size() > 1 ? t->ne[1] : 1;
  const std::vector<float> v = quant::dequantize(t->type, r.tensor_data(*t), t->nbytes, rows, cols);
  return t->ne.size() > 1 ? Array::from_vector(v, {rows, cols}) : Array::from_vector(v, {cols});
}

Array transposed(const Array& a) {
  return a.transpose(0, 1).contiguous();
}

// llama.cpp's permute: reshape(n_head, 2, hd / 2, in) -> swap axes 1, 2 -> reshape back.
Array permuted(const Array& a, int64_t heads) {
  const int64_t rows = a.shape()[0], cols = a.shape()[1], hd = rows / heads;
  return a.reshape({heads, 2, hd / 2, cols}).transpose(1, 2).contiguous().reshape({rows, cols});
}

void expect_equal(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape())) << what;
  const std::vector<double> g = got.to_f64(), w = want.to_f64();
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) bad += g[i] != w[i];
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << g.size() << " values differ";
}

const std::vector<int64_t> kHfIds{1, 271, 7, 276, 40, 263, 100, 2, 150, 9};

}  // namespace

TEST(HfConvert, RopeRowPermutationIsLlamaCppPermute) {
  const std::vector<int64_t> rows = hf_to_gguf_rope_rows(2, 4);
  EXPECT_EQ(rows, (std::vector<int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  const Array a = Array::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {12, 1});
  const std::vector<int64_t> r3 = hf_to_gguf_rope_rows(2, 6);
  const std::vector<double> p = permuted(a, 2).to_f64();
  for (size_t i = 0; i < r3.size(); ++i) EXPECT_EQ(p[i], static_cast<double>(r3[i])) << i;
  EXPECT_TESSERA_ERROR(hf_to_gguf_rope_rows(2, 5), "even");
}

TEST(HfConvert, Gpt2TensorsLogitsAndTokenizer) {
  const HfTempDir tmp;
  const std::string dir = tmp.sub("gpt2"), out = tmp.path + "/gpt2.gguf";
  const Gpt2Spec s;
  const Tensors hf = make_gpt2(dir, s);
  HfConvertOptions o;
  o.type = "f32";
  const HfConvertResult r = convert_hf_model(dir, out, o);
  EXPECT_EQ(r.config.arch, Arch::gpt2);
  EXPECT_TRUE(r.tied);
  EXPECT_EQ(r.plans.size(), 4u + 12u * static_cast<size_t>(s.layers) + 0u);
  EXPECT_NE(r.tokenizer.find("vocab.json"), std::string::npos) << r.tokenizer;

  // (a) the tensors, Conv1D weights transposed.
  const auto gguf = io::gguf::Reader::open(out);
  EXPECT_EQ(gguf.find_tensor("output.weight"), nullptr) << "tied";
  expect_equal(gguf_values(gguf, "token_embd.weight"), hf.at("transformer.wte.weight"), "wte");
  expect_equal(gguf_values(gguf, "position_embd.weight"), hf.at("transformer.wpe.weight"), "wpe");
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".", h = "transformer.h." + std::to_string(i) + ".";
    expect_equal(gguf_values(gguf, b + "attn_qkv.weight"), transposed(hf.at(h + "attn.c_attn.weight")), b + "qkv");
    expect_equal(gguf_values(gguf, b + "attn_qkv.bias"), hf.at(h + "attn.c_attn.bias"), b + "qkv bias");
    expect_equal(gguf_values(gguf, b + "attn_output.weight"), transposed(hf.at(h + "attn.c_proj.weight")), b + "o");
    expect_equal(gguf_values(gguf, b + "ffn_up.weight"), transposed(hf.at(h + "mlp.c_fc.weight")), b + "up");
    expect_equal(gguf_values(gguf, b + "ffn_down.weight"), transposed(hf.at(h + "mlp.c_proj.weight")), b + "down");
    expect_equal(gguf_values(gguf, b + "attn_norm.bias"), hf.at(h + "ln_1.bias"), b + "ln_1");
    expect_equal(gguf_values(gguf, b + "ffn_norm.weight"), hf.at(h + "ln_2.weight"), b + "ln_2");
  }
  expect_equal(gguf_values(gguf, "output_norm.bias"), hf.at("transformer.ln_f.bias"), "ln_f");
  EXPECT_EQ(gguf.get("gpt2.context_length").as_u64("k"), 32u);
  EXPECT_EQ(gguf.get("gpt2.feed_forward_length").as_u64("k"), 48u);
  EXPECT_EQ(gguf.get("general.file_type").as_u64("k"), 0u);

  // (b) the logits, against HF's definition on the HF-layout weights.
  const std::vector<int64_t> ids{259, 264, 3, 265, 100, 42, 7, 259};
  const double err = relative_error(converted_logits(out, ids), gpt2_reference(hf, s, ids).array());
  EXPECT_LT(err, 1e-4);

  // (c) the tokenizer: byte-level BPE with GPT-2's pre-tokenizer, <|endoftext|> BOS = EOS, padded.
  const auto tok = tokenizers::Tokenizer::from_gguf(gguf);
  EXPECT_EQ(gguf.get("tokenizer.ggml.model").as_string("k"), "gpt2");
  EXPECT_EQ(gguf.get("tokenizer.ggml.pre").as_string("k"), "gpt-2");
  EXPECT_EQ(tok.size(), 268);
  EXPECT_EQ(tok.bos(), 265);
  EXPECT_EQ(tok.eos(), 265);
  EXPECT_EQ(tok.vocab().type(265), tokenizers::TokenType::control);
  EXPECT_EQ(tok.vocab().tokens[267], "[PAD267]");
  EXPECT_EQ(tok.encode("hello world"), (std::vector<tokenizers::TokenId>{259, 264}));
  EXPECT_EQ(tok.encode("hell"), (std::vector<tokenizers::TokenId>{258}));
}

TEST(HfConvert, Gpt2TokenizerJsonAndUnsupportedPreTokenizers) {
  const HfTempDir tmp;
  const std::string dir = tmp.sub("gpt2"), out = tmp.path + "/gpt2.gguf";
  make_gpt2(dir);
  std::filesystem::remove(dir + "/vocab.json");
  std::filesystem::remove(dir + "/merges.txt");
  // GPT-2's tokenizer.json: ByteLevel with its regex, <|endoftext|> an added special token.
  ByteLevel b = byte_level_vocab();
  json root = json::object();
  root["added_tokens"] = json::array({json{{"id", 265}, {"content", "<|endoftext|>"}, {"special", true}}});
  root["pre_tokenizer"] = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  root["post_processor"] = {{"type", "ByteLevel"}, {"trim_offsets", false}};
  json model = {{"type", "BPE"}, {"byte_fallback", false}};
  model["vocab"] = b.vocab;
  model["merges"] = b.merges;
  root["model"] = model;
  write_json(dir + "/tokenizer.json", root);
  const HfConvertResult r = convert_hf_model(dir, out, {});
  EXPECT_NE(r.tokenizer.find("tokenizer.json (byte-level BPE, pre-tokenizer gpt-2)"), std::string::npos) << r.tokenizer;
  const auto tok = tokenizers::Tokenizer::from_gguf(out);
  EXPECT_EQ(tok.bos(), 265);
  EXPECT_FALSE(tok.vocab().add_bos);
  EXPECT_EQ(tok.vocab().type(265), tokenizers::TokenType::control);
  EXPECT_EQ(tok.encode("hello world<|endoftext|>", {.add_special = true, .parse_special = true}),
            (std::vector<tokenizers::TokenId>{259, 264, 265}));

  root["pre_tokenizer"] = {{"type", "Whitespace"}};
  write_json(dir + "/tokenizer.json", root);
  EXPECT_TESSERA_ERROR(convert_hf_model(dir, out, {}), "tokenizer.json", "neither byte-level", "not supported");
  json split = {{"type", "Split"}, {"behavior", "Isolated"}, {"invert", false}};
  split["pattern"] = {{"Regex", "\\s+"}};
  root["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", json::array({split, root["pre_tokenizer"]})}};
  root["pre_tokenizer"]["pretokenizers"][1] = {{"type", "ByteLevel"}, {"use_regex", false}};
  write_json(dir + "/tokenizer.json", root);
  EXPECT_TESSERA_ERROR(convert_hf_model(dir, out, {}), "tokenizer.json", "is not one Tessera runs", "Llama 3");
}

TEST(HfConvert, Gpt2BareNamesBf16AndUntiedHead) {
  const HfTempDir tmp;
  const std::string dir = tmp.sub("gpt2"), out = tmp.path + "/gpt2.gguf";
  Gpt2Spec s;
  s.dtype = DType::bf16;
  json config = gpt2_config(s);
  config["tie_word_embeddings"] = false;
  write_json(dir + "/config.json", config);
  write_gpt2_tokenizer(dir);
  // GPT2Model's bare names (as OpenAI's upload has them), its causal-mask buffers, and an lm_head.
  Tensors named;
  for (const auto& [name, a] : gpt2_tensors(s)) named[name.substr(std::string("transformer.").size())] = a;
  std::mt19937 rng(5);
  named["lm_head.weight"] = random_f32(rng, {s.vocab, s.dim}, 0.2f);
  named["h.0.attn.bias"] = Array::zeros(DType::f32, {1, 1, s.ctx, s.ctx});
  const Tensors hf = save_weights(dir, named, DType::bf16, false);
  HfConvertOptions o;
  o.type = "f32";
  const HfConvertResult r = convert_hf_model(dir, out, o);
  EXPECT_FALSE(r.tied);
  const auto gguf = io::gguf::Reader::open(out);
  expect_equal(gguf_values(gguf, "output.weight"), hf.at("lm_head.weight"), "lm_head");
  expect_equal(gguf_values(gguf, "blk.1.attn_qkv.weight"), transposed(hf.at("h.1.attn.c_attn.weight")), "qkv");
  EXPECT_EQ(gguf.find_tensor("blk.0.attn.bias"), nullptr);
  // The logits use the untied head.
  const std::vector<int64_t> ids{259, 264, 3, 1, 200};
  EXPECT_LT(relative_error(converted_logits(out, ids), gpt2_reference(hf, s, ids, "", "lm_head.weight").array()), 1e-4);
}

TEST(HfConvert, LlamaGqaTiedUntiedShardedAndBf16) {
  struct Case {
    const char* what;
    LlamaSpec spec;
  };
  std::vector<Case> cases;
  {
    LlamaSpec s;
    cases.push_back({"untied f32", s});
    s.tied = true;
    s.sharded = true;
    cases.push_back({"tied, sharded", s});
    s = LlamaSpec{};
    s.head_dim = 16;  // heads x head_dim = 64 != hidden_size 32
    s.head_dim_key = true;
    s.dtype = DType::bf16;
    s.rope_theta = 500000.0;
    cases.push_back({"head_dim given, bf16", s});
    s = LlamaSpec{};
    s.kv_heads = 4;  // no grouping
    s.tied = true;
    cases.push_back({"MHA tied", s});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const HfTempDir tmp;
    const std::string dir = tmp.sub("llama"), out = tmp.path + "/llama.gguf";
    const LlamaSpec& s = c.spec;
    const Tensors hf = make_llama(dir, s);
    HfConvertOptions o;
    o.type = "f32";
    const HfConvertResult r = convert_hf_model(dir, out, o);
    EXPECT_EQ(r.tied, s.tied);
    EXPECT_EQ(r.weight_files.size(), s.sharded ? 2u : 1u);
    EXPECT_EQ(r.config.n_head_kv, s.kv_heads);
    EXPECT_EQ(r.config.head_dim, s.head_dim);

    // (a) the tensors: q/k rows permuted per head (k with the kv heads), the rest as they are.
    const auto gguf = io::gguf::Reader::open(out);
    EXPECT_EQ(gguf.find_tensor("output.weight") == nullptr, s.tied);
    expect_equal(gguf_values(gguf, "token_embd.weight"), hf.at("model.embed_tokens.weight"), "embed");
    if (!s.tied) expect_equal(gguf_values(gguf, "output.weight"), hf.at("lm_head.weight"), "lm_head");
    for (int64_t i = 0; i < s.layers; ++i) {
      const std::string b = "blk." + std::to_string(i) + ".", l = "model.layers." + std::to_string(i) + ".";
      expect_equal(gguf_values(gguf, b + "attn_q.weight"), permuted(hf.at(l + "self_attn.q_proj.weight"), s.heads),
                   b + "q");
      expect_equal(gguf_values(gguf, b + "attn_k.weight"), permuted(hf.at(l + "self_attn.k_proj.weight"), s.kv_heads),
                   b + "k");
      expect_equal(gguf_values(gguf, b + "attn_v.weight"), hf.at(l + "self_attn.v_proj.weight"), b + "v");
      expect_equal(gguf_values(gguf, b + "attn_output.weight"), hf.at(l + "self_attn.o_proj.weight"), b + "o");
      expect_equal(gguf_values(gguf, b + "ffn_gate.weight"), hf.at(l + "mlp.gate_proj.weight"), b + "gate");
      expect_equal(gguf_values(gguf, b + "ffn_up.weight"), hf.at(l + "mlp.up_proj.weight"), b + "up");
      expect_equal(gguf_values(gguf, b + "ffn_down.weight"), hf.at(l + "mlp.down_proj.weight"), b + "down");
      expect_equal(gguf_values(gguf, b + "attn_norm.weight"), hf.at(l + "input_layernorm.weight"), b + "norm");
      expect_equal(gguf_values(gguf, b + "ffn_norm.weight"), hf.at(l + "post_attention_layernorm.weight"), b + "norm");
    }
    expect_equal(gguf_values(gguf, "output_norm.weight"), hf.at("model.norm.weight"), "norm");
    EXPECT_EQ(gguf.get("llama.attention.head_count_kv").as_u64("k"), static_cast<uint64_t>(s.kv_heads));
    EXPECT_EQ(gguf.get("llama.rope.dimension_count").as_u64("k"), static_cast<uint64_t>(s.head_dim));
    EXPECT_EQ(gguf.find("llama.attention.key_length") != nullptr, s.head_dim_key);
    EXPECT_NEAR(gguf.get("llama.rope.freq_base").as_f64("k"), s.rope_theta, 1e-3);

    // (b) the logits against HF's forward (rotate_half on the unpermuted q/k); RoPE on consecutive pairs
    // of the same weights is far off, so a missing or wrong permutation could not pass.
    const Array got = converted_logits(out, kHfIds);
    EXPECT_LT(relative_error(got, llama_reference(hf, s, kHfIds).array()), 1e-4);
    EXPECT_GT(relative_error(got, llama_reference(hf, s, kHfIds, Rope::pairs).array()), 1e-2);
  }
}

TEST(HfConvert, QuantizedTypesFollowThePlan) {
  const HfTempDir tmp;
  const std::string dir = tmp.sub("llama");
  LlamaSpec s;
  s.dim = 64;
  s.head_dim = 16;
  s.ffn = 128;
  s.qk_scale = 1.0f;  // attention far from one-hot, so that rounded weights move the logits smoothly
  const Tensors hf = make_llama(dir, s);
  const std::string q8 = tmp.path + "/q8.gguf", f16 = tmp.path + "/f16.gguf", km = tmp.path + "/km.gguf";
  HfConvertOptions o;  // default: f16
  convert_hf_model(dir, f16, o);
  o.type = "q8_0";
  o.overrides.push_back(io::gguf::TypeOverride::parse("output.weight=f16"));
  const HfConvertResult r = convert_hf_model(dir, q8, o);
  const auto g = io::gguf::Reader::open(q8);
  EXPECT_EQ(g.find_tensor("blk.0.attn_q.weight")->type, quant::GgmlType::q8_0);
  EXPECT_EQ(g.find_tensor("blk.0.attn_norm.weight")->type, quant::GgmlType::f32);
  EXPECT_EQ(g.find_tensor("output.weight")->type, quant::GgmlType::f16) << "--keep";
  EXPECT_EQ(g.get("general.file_type").as_u64("k"), 7u);
  EXPECT_EQ(io::gguf::Reader::open(f16).find_tensor("blk.1.ffn_down.weight")->type, quant::GgmlType::f16);
  EXPECT_EQ(io::gguf::Reader::open(f16).find_tensor("output_norm.weight")->type, quant::GgmlType::f32);
  for (const auto& p : r.plans) EXPECT_FALSE(p.reason.empty()) << p.name;
  // Rounded weights: close to the reference, not equal.
  const Array ref = llama_reference(hf, s, kHfIds).array();
  EXPECT_LT(relative_error(converted_logits(f16, kHfIds), ref), 3e-3);
  EXPECT_LT(relative_error(converted_logits(q8, kHfIds), ref), 5e-2);
  o = HfConvertOptions{};
  o.type = "q4_k_m";  // rows of 64: K-quants fall back as llama-quantize does
  convert_hf_model(dir, km, o);
  EXPECT_NO_THROW(LlmModel::load(km));
  EXPECT_EQ(io::gguf::Reader::open(km).find_tensor("blk.0.attn_q.weight")->type, quant::GgmlType::q5_0);

  // The same plan and encoders as tessera quantize: converting straight to q4_k_m gives the bytes of
  // converting to f32 and quantizing that file.
  const std::string f32 = tmp.path + "/f32.gguf", requantized = tmp.path + "/rq.gguf";
  o.type = "f32";
  convert_hf_model(dir, f32, o);
  io::gguf::quantize_file(f32, requantized, io::gguf::options_for_type("q4_k_m"));
  const auto direct = io::gguf::Reader::open(km), twice = io::gguf::Reader::open(requantized);
  ASSERT_EQ(direct.tensors().size(), twice.tensors().size());
  for (const io::gguf::TensorInfo& t : direct.tensors()) {
    const io::gguf::TensorInfo* u = twice.find_tensor(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_EQ(t.type, u->type) << t.name;
    ASSERT_EQ(t.nbytes, u->nbytes) << t.name;
    EXPECT_EQ(std::memcmp(direct.tensor_data(t), twice.tensor_data(*u), t.nbytes), 0) << t.name;
  }
  EXPECT_EQ(direct.get("general.file_type").as_u64("k"), twice.get("general.file_type").as_u64("k"));
}

TEST(HfConvert, SentencePieceTokenizerJson) {
  const HfTempDir tmp;
  const std::string dir = tmp.sub("llama"), out = tmp.path + "/m.gguf";
  make_llama(dir);
  const HfConvertResult r = convert_hf_model(dir, out, {});
  EXPECT_NE(r.tokenizer.find("SentencePiece"), std::string::npos) << r.tokenizer;
  const auto gguf = io::gguf::Reader::open(out);
  EXPECT_EQ(gguf.get("tokenizer.ggml.model").as_string("k"), "llama");
  const auto tok = tokenizers::Tokenizer::from_gguf(gguf);
  const tokenizers::Vocab& v = tok.vocab();
  EXPECT_EQ(v.size(), 280);
  EXPECT_EQ(v.type(0), tokenizers::TokenType::unknown);
  EXPECT_EQ(v.type(1), tokenizers::TokenType::control);
  EXPECT_EQ(v.type(3 + 0x41), tokenizers::TokenType::byte);
  EXPECT_EQ(v.tokens[3 + 0x41], "<0x41>");
  EXPECT_EQ(v.type(271), tokenizers::TokenType::normal);
  EXPECT_EQ(v.type(279), tokenizers::TokenType::unused);
  EXPECT_EQ(v.score(267), 0.0f) << "he: the first merge";
  EXPECT_EQ(v.score(276), -9.0f) << "▁world: the tenth merge";
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
  // HF's BPE (lowest rank first) and SentencePiece on these scores agree; "!" falls back to its byte.
  EXPECT_EQ(tok.encode("hello world"), (std::vector<tokenizers::TokenId>{1, 271, 276}));
  EXPECT_EQ(tok.encode("hello!"), (std::vector<tokenizers::TokenId>{1, 271, 3 + '!'}));
  EXPECT_EQ(tok.encode("world hello"), (std::vector<tokenizers::TokenId>{1, 276, 271}));
}

TEST(HfConvert, Llama3ByteLevelTokenizerJson) {
  const HfTempDir tmp;
  const std::string dir = tmp.sub("llama"), out = tmp.path + "/m.gguf";
  LlamaSpec s;
  make_llama(dir, s);
  json c = llama_config(s);
  c["bos_token_id"] = 265;
  c["eos_token_id"] = json::array({266, 265});  // a list (as Llama 3.1 has it) names no single EOS
  write_json(dir + "/config.json", c);
  std::filesystem::remove(dir + "/tokenizer_config.json");
  write_llama3_tokenizer(dir);
  const HfConvertResult r = convert_hf_model(dir, out, {});
  EXPECT_NE(r.tokenizer.find("llama-bpe"), std::string::npos) << r.tokenizer;
  const auto gguf = io::gguf::Reader::open(out);
  EXPECT_EQ(gguf.get("tokenizer.ggml.model").as_string("k"), "gpt2");
  EXPECT_EQ(gguf.get("tokenizer.ggml.pre").as_string("k"), "llama-bpe");
  const auto tok = tokenizers::Tokenizer::from_gguf(gguf);
  EXPECT_EQ(tok.bos(), 265);
  EXPECT_EQ(tok.eos(), 266);
  EXPECT_EQ(tok.vocab().type(266), tokenizers::TokenType::control);
  EXPECT_TRUE(tok.vocab().add_bos) << "from the post-processor's template";
  EXPECT_EQ(tok.encode("hello world"), (std::vector<tokenizers::TokenId>{265, 259, 264}));
}

TEST(HfConvert, ErrorsNameTheFileTheKeyOrTensorAndWriteNothing) {
  const HfTempDir tmp;
  const std::string out = tmp.path + "/out.gguf";
  write_text(out, "previous");
  const auto fresh = [&](const std::string& name, const LlamaSpec& s = {}) {
    const std::string dir = tmp.sub(name);
    make_llama(dir, s);
    return dir;
  };
  const auto convert = [&](const std::string& dir) { convert_hf_model(dir, out, {}); };

  EXPECT_TESSERA_ERROR(convert(tmp.path + "/nowhere"), "nowhere", "not a folder");
  {
    const std::string dir = fresh("no_config");
    std::filesystem::remove(dir + "/config.json");
    EXPECT_TESSERA_ERROR(convert(dir), "config.json", "missing");
  }
  {
    const std::string dir = fresh("mistral");
    json c = llama_config({});
    c["model_type"] = "mistral";
    write_json(dir + "/config.json", c);
    EXPECT_TESSERA_ERROR(convert(dir), "config.json", "model_type \"mistral\"", "gpt2 and llama");
  }
  {
    const std::string dir = fresh("no_hidden");
    json c = llama_config({});
    c.erase("hidden_size");
    write_json(dir + "/config.json", c);
    EXPECT_TESSERA_ERROR(convert(dir), "config.json", "missing key 'hidden_size'");
  }
  {
    const std::string dir = fresh("scaling");
    json c = llama_config({});
    c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
    write_json(dir + "/config.json", c);
    EXPECT_TESSERA_ERROR(convert(dir), "config.json", "'rope_scaling'", "not supported");
  }
  {  // transformers 5's rope_parameters: the default kind converts with its rope_theta, others are refused
    const std::string dir = fresh("rope_parameters");
    json c = llama_config({});
    c.erase("rope_theta");
    c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 250000.0}};
    write_json(dir + "/config.json", c);
    const std::string ok = tmp.path + "/rope.gguf";
    convert_hf_model(dir, ok, {});
    EXPECT_NEAR(io::gguf::Reader::open(ok).get("llama.rope.freq_base").as_f64("k"), 250000.0, 1e-3);
    c["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 250000.0}, {"factor", 4.0}};
    write_json(dir + "/config.json", c);
    EXPECT_TESSERA_ERROR(convert(dir), "config.json", "'rope_parameters'", "yarn", "not supported");
  }
  {
    const std::string dir = fresh("no_weights");
    std::filesystem::remove(dir + "/model.safetensors");
    EXPECT_TESSERA_ERROR(convert(dir), "no weights", "model.safetensors");
  }
  {  // a tensor missing from the file
    const std::string dir = tmp.sub("missing_tensor");
    write_json(dir + "/config.json", llama_config({}));
    write_spm_tokenizer(dir);
    Tensors t = llama_tensors({});
    t.erase("model.layers.1.mlp.up_proj.weight");
    save_weights(dir, t, DType::f32, false);
    EXPECT_TESSERA_ERROR(convert(dir), "model.safetensors", "missing tensor \"model.layers.1.mlp.up_proj.weight\"",
                         "[48, 32]", "intermediate_size");
  }
  {  // k_proj sized for 4 kv heads where config.json says 2
    const std::string dir = fresh("bad_shape");
    json c = llama_config({});
    c["num_key_value_heads"] = 4;
    write_json(dir + "/config.json", c);
    EXPECT_TESSERA_ERROR(convert(dir), "model.safetensors", "\"model.layers.0.self_attn.k_proj.weight\"",
                         "shape [16, 32]", "expected [32, 32]", "num_key_value_heads");
  }
  {  // a tensor the architecture does not have
    const std::string dir = tmp.sub("extra");
    write_json(dir + "/config.json", llama_config({}));
    write_spm_tokenizer(dir);
    Tensors t = llama_tensors({});
    t["model.layers.0.self_attn.q_proj.bias"] = Array::zeros(DType::f32, {32});
    save_weights(dir, t, DType::f32, false);
    EXPECT_TESSERA_ERROR(convert(dir), "\"model.layers.0.self_attn.q_proj.bias\"", "not part of a llama model");
  }
  {  // an integer tensor
    const std::string dir = tmp.sub("int");
    write_json(dir + "/config.json", llama_config({}));
    write_spm_tokenizer(dir);
    Tensors t = llama_tensors({});
    StateDict all = t;
    for (auto& [n, a] : all) {
      if (n == "model.norm.weight") a = a.astype(DType::i32);
    }
    io::save_safetensors(dir + "/model.safetensors", all);
    EXPECT_TESSERA_ERROR(convert(dir), "\"model.norm.weight\" is I32", "F32, F16 or BF16");
  }
  {  // an index naming a shard that is not there
    LlamaSpec s;
    s.sharded = true;
    const std::string dir = fresh("shard", s);
    std::filesystem::remove(dir + "/model-00002-of-00002.safetensors");
    EXPECT_TESSERA_ERROR(convert(dir), "model.safetensors.index.json", "model-00002-of-00002.safetensors", "missing");
  }
  {  // vocab_size disagreeing with the embedding
    const std::string dir = fresh("vocab");
    json c = llama_config({});
    c["vocab_size"] = 300;
    write_json(dir + "/config.json", c);
    EXPECT_TESSERA_ERROR(convert(dir), "vocab_size = 300", "\"model.embed_tokens.weight\" has 280 rows");
  }
  {  // only a SentencePiece protobuf
    const std::string dir = fresh("spm_only");
    std::filesystem::remove(dir + "/tokenizer.json");
    write_text(dir + "/tokenizer.model", "\x0a\x05");
    EXPECT_TESSERA_ERROR(convert(dir), "tokenizer.model", "SentencePiece", "tokenizer.json", "vocab.json + merges.txt");
  }
  {  // a token id past the model's embedding rows
    const std::string dir = fresh("big_id");
    write_json(dir + "/tokenizer_config.json",
               {{"added_tokens_decoder", {{"2000000000", {{"content", "<big>"}, {"special", true}}}}}});
    EXPECT_TESSERA_ERROR(convert(dir), "tokenizer_config.json", "token id 2000000000 is past 279",
                         "embedding has 280 rows");
  }
  {  // a WordPiece tokenizer
    const std::string dir = fresh("wordpiece");
    write_json(dir + "/tokenizer.json", {{"model", {{"type", "WordPiece"}, {"vocab", {{"a", 0}}}}}});
    EXPECT_TESSERA_ERROR(convert(dir), "tokenizer.json", "model.type \"WordPiece\"", "not supported");
  }
  {  // GPT-2 without merges.txt
    const std::string dir = tmp.sub("gpt2_nomerges");
    make_gpt2(dir);
    std::filesystem::remove(dir + "/merges.txt");
    EXPECT_TESSERA_ERROR(convert(dir), "merges.txt is missing");
  }
  {  // an unknown output type
    const std::string dir = fresh("type");
    HfConvertOptions o;
    o.type = "q3_z";
    EXPECT_TESSERA_ERROR(convert_hf_model(dir, out, o), "q3_z");
  }
  EXPECT_EQ(read_text(out), "previous") << "a failed conversion leaves the output as it was";
}
