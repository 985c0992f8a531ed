#include "tessera/models/llm/llm_config.h"

#include <cmath>
#include <limits>
#include <optional>

#include "tessera/core/error.h"
#include "tessera/core/printable.h"

namespace tessera::models::llm {

namespace {

// Wraps a typed read so that its message also names the file (Value's own errors name only the key).
template <class F>
auto read_value(const io::gguf::Reader& file, const std::string& key, F&& read) {
  try {
    return read();
  } catch (const Error& e) {
    fail("{}: metadata key '{}': {}", file.source(), key, e.what());
  }
}

// A positive integer no larger than `limit` (limits keep products like n_head * head_dim in range).
std::optional<int64_t> count_key(const io::gguf::Reader& file, const std::string& key, bool required,
                                 int64_t limit = int64_t{1} << 31) {
  const io::gguf::Value* v = file.find(key);
  if (v == nullptr) {
    if (required) fail("{}: missing metadata key '{}'", file.source(), key);
    return std::nullopt;
  }
  const uint64_t n = read_value(file, key, [&] { return v->as_u64(key); });
  if (n == 0 || n > static_cast<uint64_t>(limit)) {
    fail("{}: metadata key '{}' = {} is out of range (expected 1 to {})", file.source(), key, n, limit);
  }
  return static_cast<int64_t>(n);
}

// A finite, positive float key (an epsilon or a RoPE base).
std::optional<double> float_key(const io::gguf::Reader& file, const std::string& key, bool required) {
  const io::gguf::Value* v = file.find(key);
  if (v == nullptr) {
    if (required) fail("{}: missing metadata key '{}'", file.source(), key);
    return std::nullopt;
  }
  const double x = read_value(file, key, [&] { return v->as_f64(key); });
  if (!std::isfinite(x) || x <= 0) fail("{}: metadata key '{}' = {} must be a positive number", file.source(), key, x);
  return x;
}

Arch read_arch(const io::gguf::Reader& file) {
  const io::gguf::Value* v = file.find("general.architecture");
  if (v == nullptr) fail("{}: missing metadata key 'general.architecture'", file.source());
  const std::string& name = read_value(file, "general.architecture", [&]() -> const std::string& {
    return v->as_string("general.architecture");
  });
  if (name == "llama") return Arch::llama;
  if (name == "gpt2") return Arch::gpt2;
  fail("{}: unsupported architecture {} (general.architecture); supported: llama, gpt2", file.source(),
       printable_quoted(name, 64));
}

// Rows of token_embd: GGUF lists ne[0] (the embedding width) first, so the vocabulary is ne[1].
int64_t vocab_from_embeddings(const io::gguf::Reader& file, const LlmConfig& c) {
  const io::gguf::TensorInfo* t = file.find_tensor("token_embd.weight");
  if (t == nullptr) fail("{}: missing tensor 'token_embd.weight' (the vocabulary size comes from it)", file.source());
  if (t->ne.size() != 2 || t->ne[0] != c.n_embd || t->ne[1] < 1) {
    fail("{}: tensor 'token_embd.weight' has shape {} (GGUF ne), expected [{}, n_vocab] ({} = {})", file.source(),
         shape_str(t->ne), c.n_embd, c.key("embedding_length"), c.n_embd);
  }
  return t->ne[1];
}

}  // namespace

const char* arch_name(Arch arch) {
  return arch == Arch::llama ? "llama" : "gpt2";
}

std::string LlmConfig::key(const std::string& suffix) const {
  return std::string(arch_name(arch)) + "." + suffix;
}

LlmConfig read_llm_config(const io::gguf::Reader& file) {
  LlmConfig c;
  c.arch = read_arch(file);
  const auto k = [&](const char* suffix) { return c.key(suffix); };
  c.n_embd = *count_key(file, k("embedding_length"), true);
  c.n_layer = *count_key(file, k("block_count"), true, 1 << 16);
  c.n_head = *count_key(file, k("attention.head_count"), true, 1 << 16);
  c.n_head_kv = count_key(file, k("attention.head_count_kv"), false, 1 << 16).value_or(c.n_head);
  c.n_ff = *count_key(file, k("feed_forward_length"), true);
  c.n_ctx = *count_key(file, k("context_length"), true);

  if (c.n_head % c.n_head_kv != 0) {
    fail("{}: {} = {} is not a multiple of {} = {} (each key/value head serves a whole group of query heads)",
         file.source(), k("attention.head_count"), c.n_head, k("attention.head_count_kv"), c.n_head_kv);
  }
  // The head size: attention.key_length when given (heads need not tile the residual stream), else
  // n_embd / n_head, which must then divide evenly.
  if (auto kl = count_key(file, k("attention.key_length"), false, 1 << 16)) {
    c.head_dim = *kl;
  } else {
    if (c.n_embd % c.n_head != 0) {
      fail("{}: {} = {} is not a multiple of {} = {} (and there is no {} giving the head size)", file.source(),
           k("embedding_length"), c.n_embd, k("attention.head_count"), c.n_head, k("attention.key_length"));
    }
    c.head_dim = c.n_embd / c.n_head;
  }
  if (auto vl = count_key(file, k("attention.value_length"), false, 1 << 16); vl && *vl != c.head_dim) {
    fail("{}: {} = {} differs from the key head size {}; separate key and value head sizes are not supported",
         file.source(), k("attention.value_length"), *vl, c.head_dim);
  }

  if (c.arch == Arch::llama) {
    c.norm_eps = *float_key(file, k("attention.layer_norm_rms_epsilon"), true);
    c.rope_freq_base = float_key(file, k("rope.freq_base"), false).value_or(10000.0);
    c.n_rot = count_key(file, k("rope.dimension_count"), false, 1 << 16).value_or(c.head_dim);
    if (c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
      fail("{}: {} = {} must be even and at most the head size {} (RoPE rotates pairs within a head)", file.source(),
           k("rope.dimension_count"), c.n_rot, c.head_dim);
    }
  } else {
    c.norm_eps = *float_key(file, k("attention.layer_norm_epsilon"), true);
  }

  c.n_vocab = vocab_from_embeddings(file, c);
  if (auto vs = count_key(file, k("vocab_size"), false); vs && *vs != c.n_vocab) {
    fail("{}: {} = {} disagrees with tensor 'token_embd.weight', which has {} rows", file.source(), k("vocab_size"),
         *vs, c.n_vocab);
  }
  return c;
}

}  // namespace tessera::models::llm
