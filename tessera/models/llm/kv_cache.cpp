#include "tessera/models/llm/kv_cache.h"

#include <fmt/format.h>

#include <numeric>

#include "tessera/core/error.h"
#include "tessera/ops/ops.h"

namespace tessera::models::llm {

namespace {

// Rows `positions` of `cache` [n_ctx, heads, d] replaced by `rows` [m, heads, d]. Written as a one-hot
// product and a select (exact: each output row is one input row times 1 plus zeros) because the op set
// has no scatter-store; the aliasing still makes the update in place.
Tensor write_rows(const Tensor& cache, const Tensor& rows, const Tensor& positions) {
  const int64_t n_ctx = cache.dim(0), m = rows.dim(0), width = rows.dim(1) * rows.dim(2);
  const Tensor hot = ops::one_hot(positions, n_ctx, DType::f32);  // [m, n_ctx]
  const Tensor scattered = ops::matmul(ops::transpose(hot, 0, 1), ops::reshape(rows, {m, width}));
  const Tensor written = ops::gt(ops::sum(hot, {0}), ops::scalar_like(hot, 0.0));  // [n_ctx]
  return ops::where(ops::reshape(written, {n_ctx, 1, 1}), ops::reshape(scattered, cache.shape()), cache);
}

}  // namespace

DecodeGraph decode_graph(const LlmModel& model, int64_t m) {
  const LlmConfig& c = model.config();
  const Tensor tokens = Tensor::placeholder("tokens", DType::i64, {m});
  const Tensor positions = Tensor::placeholder("positions", DType::i64, {m});
  std::vector<Tensor> cache_in, cache_out;
  std::vector<ir::Value> inputs{tokens.value(), positions.value()};
  for (int64_t l = 0; l < c.n_layer; ++l) {
    for (const char* kind : {"k", "v"}) {
      cache_in.push_back(
          Tensor::placeholder(fmt::format("cache_{}{}", kind, l), DType::f32, {c.n_ctx, c.n_head_kv, c.head_dim}));
      inputs.push_back(cache_in.back().value());
    }
  }
  cache_out.resize(cache_in.size());
  // Token i sees cache rows j <= positions[i]: earlier chunks and the causal part of its own.
  const Tensor visible = ops::le(ops::reshape(ops::arange(c.n_ctx), {1, c.n_ctx}), ops::reshape(positions, {m, 1}));
  const Attend attend = [&](int64_t layer, const Tensor& q, const Tensor& k, const Tensor& v) {
    const auto i = static_cast<size_t>(2 * layer);
    cache_out[i] = write_rows(cache_in[i], k, positions);
    cache_out[i + 1] = write_rows(cache_in[i + 1], v, positions);
    const Tensor o = ops::scaled_dot_product_attention(ops::transpose(q, 0, 1), ops::transpose(cache_out[i], 0, 1),
                                                       ops::transpose(cache_out[i + 1], 0, 1), visible);
    return ops::reshape(ops::transpose(o, 0, 1), {m, c.n_head * c.head_dim});
  };
  const Tensor logits = model.forward(tokens, positions, attend);
  std::vector<ir::Value> outputs{logits.value()};
  DecodeGraph d;
  for (size_t j = 0; j < cache_out.size(); ++j) {
    outputs.push_back(cache_out[j].value());
    d.aliases.push_back({static_cast<int>(1 + j), static_cast<int>(2 + j)});
  }
  d.graph = ir::Graph::build(inputs, outputs, std::string(arch_name(c.arch)) + "_decode");
  return d;
}

Decoder::Decoder(const LlmModel& model, backends::Backend& backend) : model_(model), backend_(backend) {
  const LlmConfig& c = model.config();
  for (int64_t i = 0; i < 2 * c.n_layer; ++i) {
    cache_.push_back(Array::zeros(DType::f32, {c.n_ctx, c.n_head_kv, c.head_dim}));
  }
}

Array Decoder::step(const std::vector<int64_t>& tokens) {
  model_.check_tokens(tokens);
  const auto m = static_cast<int64_t>(tokens.size());
  const LlmConfig& c = model_.config();
  if (position_ + m > c.n_ctx) {
    fail("{}: decoding {} more tokens at position {} would pass the context length {} ({})", model_.file().source(),
         m, position_, c.n_ctx, c.key("context_length"));
  }
  auto& exe = by_length_[m];
  if (!exe) {
    const DecodeGraph d = decode_graph(model_, m);
    exe = backend_.compile(d.graph, backends::CompileSpec{d.aliases});
  }
  std::vector<int64_t> positions(tokens.size());
  std::iota(positions.begin(), positions.end(), position_);
  std::vector<Array> inputs{Array::from_vector(tokens, {m}), Array::from_vector(positions, {m})};
  inputs.insert(inputs.end(), cache_.begin(), cache_.end());
  std::vector<Array> outputs{Array::empty(DType::f32, {m, c.n_vocab})};
  outputs.insert(outputs.end(), cache_.begin(), cache_.end());
  exe->run_into(inputs, outputs);  // the caches are updated in place
  position_ += m;
  return outputs[0];
}

}  // namespace tessera::models::llm
