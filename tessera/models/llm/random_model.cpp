#include "tessera/models/llm/random_model.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/core/philox.h"
#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/io/gguf/quantize_file.h"
#include "tessera/quant/quantize.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/tokenizers/synthetic_vocab.h"

namespace tessera::models::llm {

namespace {

using io::gguf::Value;
using quant::GgmlType;

// One tensor to draw: GGUF dims ne = [cols, rows], values uniform with standard deviation `std`
// around `mean`.
struct Draw {
  std::string name;
  int64_t cols = 0, rows = 1;
  double mean = 0, std = 0;
};

uint64_t name_hash(const std::string& s) {  // FNV-1a: each tensor's stream depends on its name only
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<float> draw_values(const Draw& d, uint64_t seed) {
  const int64_t n = d.cols * d.rows;
  std::vector<float> out(static_cast<size_t>(n));
  const uint64_t stream = seed ^ name_hash(d.name);
  const double half_width = std::sqrt(3.0) * d.std;  // uniform on [-a, a] has variance a^2 / 3
  runtime::default_pool().parallel_for((n + 3) / 4, 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const PhiloxBlock bits = philox_block(stream, static_cast<uint64_t>(i));
      for (int64_t j = 0; j < 4 && 4 * i + j < n; ++j) {
        const double u = 2.0 * uniform24(bits[static_cast<size_t>(j)]) - 1.0;
        out[static_cast<size_t>(4 * i + j)] = static_cast<float>(d.mean + half_width * u);
      }
    }
  });
  return out;
}

// A weight matrix [rows, cols] with variance 1 / fan_in, a norm scale near 1, a bias near 0.
Draw matrix(std::string name, int64_t rows, int64_t cols) {
  return Draw{std::move(name), cols, rows, 0.0, 1.0 / std::sqrt(static_cast<double>(cols))};
}
Draw norm(std::string name, int64_t n) { return Draw{std::move(name), n, 1, 1.0, 0.05}; }
Draw bias(std::string name, int64_t n) { return Draw{std::move(name), n, 1, 0.0, 0.02}; }

std::vector<Draw> llama_tensors(const RandomModelSpec& s) {
  const int64_t kv = (s.kv_heads == 0 ? s.heads : s.kv_heads) * (s.dim / s.heads);
  std::vector<Draw> t{matrix("token_embd.weight", s.vocab, s.dim), norm("output_norm.weight", s.dim)};
  if (!s.tied) t.push_back(matrix("output.weight", s.vocab, s.dim));
  for (int64_t i = 0; i < s.layers; ++i) {
    const auto n = [i](const char* what) { return fmt::format("blk.{}.{}.weight", i, what); };
    t.push_back(norm(n("attn_norm"), s.dim));
    t.push_back(matrix(n("attn_q"), s.dim, s.dim));
    t.push_back(matrix(n("attn_k"), kv, s.dim));
    t.push_back(matrix(n("attn_v"), kv, s.dim));
    t.push_back(matrix(n("attn_output"), s.dim, s.dim));
    t.push_back(norm(n("ffn_norm"), s.dim));
    t.push_back(matrix(n("ffn_gate"), s.ffn, s.dim));
    t.push_back(matrix(n("ffn_up"), s.ffn, s.dim));
    t.push_back(matrix(n("ffn_down"), s.dim, s.ffn));
  }
  return t;
}

std::vector<Draw> gpt2_tensors(const RandomModelSpec& s) {
  std::vector<Draw> t{matrix("token_embd.weight", s.vocab, s.dim), Draw{"position_embd.weight", s.dim, s.ctx, 0.0, 0.1},
                      norm("output_norm.weight", s.dim), bias("output_norm.bias", s.dim)};
  for (int64_t i = 0; i < s.layers; ++i) {
    const auto n = [i](const char* what) { return fmt::format("blk.{}.{}", i, what); };
    t.push_back(norm(n("attn_norm.weight"), s.dim));
    t.push_back(bias(n("attn_norm.bias"), s.dim));
    t.push_back(matrix(n("attn_qkv.weight"), 3 * s.dim, s.dim));
    t.push_back(bias(n("attn_qkv.bias"), 3 * s.dim));
    t.push_back(matrix(n("attn_output.weight"), s.dim, s.dim));
    t.push_back(bias(n("attn_output.bias"), s.dim));
    t.push_back(norm(n("ffn_norm.weight"), s.dim));
    t.push_back(bias(n("ffn_norm.bias"), s.dim));
    t.push_back(matrix(n("ffn_up.weight"), s.ffn, s.dim));
    t.push_back(bias(n("ffn_up.bias"), s.ffn));
    t.push_back(matrix(n("ffn_down.weight"), s.dim, s.ffn));
    t.push_back(bias(n("ffn_down.bias"), s.dim));
  }
  return t;
}

void write_hyperparameters(io::gguf::Writer& w, const RandomModelSpec& s) {
  const std::string a = arch_name(s.arch);
  const auto count = [&](const char* key, int64_t v) {
    w.set(fmt::format("{}.{}", a, key), Value::u32(static_cast<uint64_t>(v)));
  };
  w.set("general.architecture", Value::string(a));
  w.set("general.name", Value::string(s.name.empty() ? "random-" + a : s.name));
  w.set("general.description",
        Value::string(fmt::format("random weights written by tessera init-model (seed {})", s.seed)));
  count("context_length", s.ctx);
  count("embedding_length", s.dim);
  count("block_count", s.layers);
  count("feed_forward_length", s.ffn);
  count("attention.head_count", s.heads);
  count("vocab_size", s.vocab);
  if (s.arch == Arch::llama) {
    count("attention.head_count_kv", s.kv_heads == 0 ? s.heads : s.kv_heads);
    count("rope.dimension_count", s.dim / s.heads);
    w.set(a + ".rope.freq_base", Value::f32(static_cast<float>(s.rope_freq_base)));
    w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(static_cast<float>(s.norm_eps)));
  } else {
    w.set(a + ".attention.layer_norm_epsilon", Value::f32(static_cast<float>(s.norm_eps)));
  }
}

}  // namespace

void RandomModelSpec::validate() const {
  const auto positive = [](const char* what, int64_t v, int64_t limit) {
    TESSERA_CHECK(v >= 1 && v <= limit, "{} = {} is out of range (expected 1 to {})", what, v, limit);
  };
  positive("dim", dim, 1 << 20);
  positive("layers", layers, 1 << 12);
  positive("heads", heads, 1 << 12);
  positive("ffn", ffn, 1 << 22);
  positive("ctx", ctx, 1 << 24);
  TESSERA_CHECK(kv_heads >= 0 && kv_heads <= heads, "kv-heads = {} must be between 1 and heads = {}",
                kv_heads, heads);
  TESSERA_CHECK(dim % heads == 0, "dim = {} is not a multiple of heads = {}", dim, heads);
  const int64_t kv = kv_heads == 0 ? heads : kv_heads;
  TESSERA_CHECK(heads % kv == 0, "heads = {} is not a multiple of kv-heads = {}", heads, kv);
  if (arch == Arch::gpt2) {
    TESSERA_CHECK(kv == heads, "gpt2 has no grouped-query attention (kv-heads = {}, heads = {})", kv, heads);
  } else {
    TESSERA_CHECK((dim / heads) % 2 == 0, "the head size dim / heads = {} must be even for RoPE",
                  dim / heads);
  }
  const int64_t least = arch == Arch::llama ? 260 : 257;
  TESSERA_CHECK(vocab >= least && vocab <= (int64_t{1} << 31) - 1,
                "vocab = {} is out of range (expected {} to 2147483647: the byte tokens come first)", vocab,
                least);
  (void)io::gguf::options_for_type(type);  // an unknown type name fails here, before any work
}

void write_random_model(const RandomModelSpec& spec, const std::string& path,
                        const std::function<void(size_t, size_t, const std::string&)>& on_tensor) {
  spec.validate();
  RandomModelSpec s = spec;
  if (s.arch == Arch::gpt2) s.tied = true;
  io::gguf::Writer w;
  write_hyperparameters(w, s);
  tokenizers::write_vocab(w, tokenizers::synthetic_vocab(
                                 s.arch == Arch::llama ? tokenizers::Model::spm : tokenizers::Model::bpe, s.vocab));

  io::gguf::QuantizeOptions options = io::gguf::options_for_type(s.type);
  const bool has_output = s.arch == Arch::llama && !s.tied;
  for (auto& o : io::gguf::mix_overrides(options.mix, s.layers, has_output)) options.overrides.push_back(std::move(o));
  w.set("general.quantization_version", Value::u32(2));
  try {
    w.set("general.file_type", Value::u32(io::gguf::llama_file_type(options.type)));
  } catch (const Error&) {
    // a type llama.cpp names no file type after: no label
  }
  const std::vector<Draw> draws = s.arch == Arch::llama ? llama_tensors(s) : gpt2_tensors(s);
  for (size_t i = 0; i < draws.size(); ++i) {
    const Draw& d = draws[i];
    const std::vector<int64_t> ne = d.rows == 1 ? std::vector<int64_t>{d.cols} : std::vector<int64_t>{d.cols, d.rows};
    const io::gguf::TensorPlan plan = io::gguf::plan_tensor(d.name, ne, GgmlType::f32, options);
    const std::vector<float> values = draw_values(d, s.seed);
    std::vector<uint8_t> bytes(static_cast<size_t>(quant::row_bytes(plan.to, d.cols) * d.rows));
    const int64_t row_bytes = quant::row_bytes(plan.to, d.cols);
    runtime::default_pool().parallel_for(d.rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        quant::quantize_row(plan.to, values.data() + r * d.cols, bytes.data() + r * row_bytes, d.cols);
      }
    });
    w.add_tensor(d.name, plan.to, ne, std::move(bytes));
    if (on_tensor) on_tensor(i, draws.size(), d.name);
  }
  w.write(path);
}

}  // namespace tessera::models::llm
