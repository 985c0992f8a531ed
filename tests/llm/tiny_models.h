#pragma once
// Small random-weight Llama and GPT-2 GGUF images built in memory, for the bad-input and structure
// tests: a Writer that a test may change (drop a key, a tensor, reshape one) before parsing it.
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_writer.h"

namespace tessera::test {

struct TinyShape {
  int64_t dim = 16, layers = 1, heads = 4, kv_heads = 2, ffn = 24, vocab = 11, ctx = 32;
  bool tied = false;
};

// Called for each tensor before it is added: may replace the array, or return false to leave it out.
using TensorEdit = std::function<bool(const std::string& name, Array& array)>;

// A Writer whose add_array passes every tensor through `edit` first.
struct EditingWriter {
  io::gguf::Writer w;
  TensorEdit edit;
  void add_array(const std::string& name, Array a) {
    if (!edit || edit(name, a)) w.add_array(name, a);
  }
  void set(const std::string& key, io::gguf::Value v) { w.set(key, std::move(v)); }
};

inline Array random_array(std::mt19937& rng, const Shape& shape, float scale, float offset = 0.0f) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Array a = Array::empty(DType::f32, shape);
  float* p = a.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = offset + scale * normal(rng);
  return a;
}

// Tensors are added with row-major shapes (the writer reverses them into GGUF ne).
inline io::gguf::Writer tiny_llama(const TinyShape& s = {}, const TensorEdit& edit = {}, uint32_t seed = 7) {
  using io::gguf::Value;
  std::mt19937 rng(seed);
  EditingWriter w{io::gguf::Writer(), edit};
  w.set("general.architecture", Value::string("llama"));
  w.set("llama.context_length", Value::u32(static_cast<uint64_t>(s.ctx)));
  w.set("llama.embedding_length", Value::u32(static_cast<uint64_t>(s.dim)));
  w.set("llama.block_count", Value::u32(static_cast<uint64_t>(s.layers)));
  w.set("llama.feed_forward_length", Value::u32(static_cast<uint64_t>(s.ffn)));
  w.set("llama.attention.head_count", Value::u32(static_cast<uint64_t>(s.heads)));
  w.set("llama.attention.head_count_kv", Value::u32(static_cast<uint64_t>(s.kv_heads)));
  w.set("llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
  w.set("llama.rope.freq_base", Value::f32(10000.0f));
  const int64_t hd = s.dim / s.heads;
  const float ws = 1.0f / std::sqrt(static_cast<float>(s.dim));
  const Array embd = random_array(rng, {s.vocab, s.dim}, ws * 4);
  w.add_array("token_embd.weight", embd);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.add_array(b + "attn_norm.weight", random_array(rng, {s.dim}, 0.1f, 1.0f));
    w.add_array(b + "attn_q.weight", random_array(rng, {s.heads * hd, s.dim}, ws));
    w.add_array(b + "attn_k.weight", random_array(rng, {s.kv_heads * hd, s.dim}, ws));
    w.add_array(b + "attn_v.weight", random_array(rng, {s.kv_heads * hd, s.dim}, ws));
    w.add_array(b + "attn_output.weight", random_array(rng, {s.dim, s.heads * hd}, ws));
    w.add_array(b + "ffn_norm.weight", random_array(rng, {s.dim}, 0.1f, 1.0f));
    w.add_array(b + "ffn_gate.weight", random_array(rng, {s.ffn, s.dim}, ws));
    w.add_array(b + "ffn_up.weight", random_array(rng, {s.ffn, s.dim}, ws));
    w.add_array(b + "ffn_down.weight", random_array(rng, {s.dim, s.ffn}, 1.0f / std::sqrt(float(s.ffn))));
  }
  w.add_array("output_norm.weight", random_array(rng, {s.dim}, 0.1f, 1.0f));
  if (!s.tied) w.add_array("output.weight", random_array(rng, {s.vocab, s.dim}, ws));
  return std::move(w.w);
}

inline io::gguf::Writer tiny_gpt2(const TinyShape& s = {}, const TensorEdit& edit = {}, uint32_t seed = 8) {
  using io::gguf::Value;
  std::mt19937 rng(seed);
  EditingWriter w{io::gguf::Writer(), edit};
  w.set("general.architecture", Value::string("gpt2"));
  w.set("gpt2.context_length", Value::u32(static_cast<uint64_t>(s.ctx)));
  w.set("gpt2.embedding_length", Value::u32(static_cast<uint64_t>(s.dim)));
  w.set("gpt2.block_count", Value::u32(static_cast<uint64_t>(s.layers)));
  w.set("gpt2.feed_forward_length", Value::u32(static_cast<uint64_t>(s.ffn)));
  w.set("gpt2.attention.head_count", Value::u32(static_cast<uint64_t>(s.heads)));
  w.set("gpt2.attention.layer_norm_epsilon", Value::f32(1e-5f));
  const float ws = 1.0f / std::sqrt(static_cast<float>(s.dim));
  w.add_array("token_embd.weight", random_array(rng, {s.vocab, s.dim}, 1.0f));
  w.add_array("position_embd.weight", random_array(rng, {s.ctx, s.dim}, 1.0f));
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.add_array(b + "attn_norm.weight", random_array(rng, {s.dim}, 0.1f, 1.0f));
    w.add_array(b + "attn_norm.bias", random_array(rng, {s.dim}, 0.1f));
    w.add_array(b + "attn_qkv.weight", random_array(rng, {3 * s.dim, s.dim}, ws));
    w.add_array(b + "attn_qkv.bias", random_array(rng, {3 * s.dim}, 0.2f));
    w.add_array(b + "attn_output.weight", random_array(rng, {s.dim, s.dim}, ws));
    w.add_array(b + "attn_output.bias", random_array(rng, {s.dim}, 0.2f));
    w.add_array(b + "ffn_norm.weight", random_array(rng, {s.dim}, 0.1f, 1.0f));
    w.add_array(b + "ffn_norm.bias", random_array(rng, {s.dim}, 0.1f));
    w.add_array(b + "ffn_up.weight", random_array(rng, {s.ffn, s.dim}, ws));
    w.add_array(b + "ffn_up.bias", random_array(rng, {s.ffn}, 0.2f));
    w.add_array(b + "ffn_down.weight", random_array(rng, {s.dim, s.ffn}, 1.0f / std::sqrt(float(s.ffn))));
    w.add_array(b + "ffn_down.bias", random_array(rng, {s.dim}, 0.2f));
  }
  w.add_array("output_norm.weight", random_array(rng, {s.dim}, 0.1f, 1.0f));
  w.add_array("output_norm.bias", random_array(rng, {s.dim}, 0.1f));
  if (!s.tied) w.add_array("output.weight", random_array(rng, {s.vocab, s.dim}, ws));
  return std::move(w.w);
}

// Parses the writer's bytes as the file "tiny.gguf" (the Reader keeps its own copy).
inline io::gguf::Reader parse_tiny(const io::gguf::Writer& w) {
  const std::string bytes = w.serialize();
  return io::gguf::Reader::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "tiny.gguf");
}

}  // namespace tessera::test
