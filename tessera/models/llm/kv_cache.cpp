#include "tessera/models/llm/kv_cache.h"

#include <fmt/format.h>

#include <numeric>

#include "tessera/core/error.h"
#include "tessera/ops/ops.h"

namespace tessera::models::llm {

DecodeGraph decode_graph(const LlmModel& model, int64_t m, int64_t n_ctx, bool last_row_only, DType cache) {
  TESSERA_CHECK(cache == DType::f32 || cache == DType::f16, "decode graph: the KV cache is f32 or f16, not {}",
                dtype_name(cache));
  const LlmConfig& c = model.config();
  const int64_t rows = n_ctx > 0 ? n_ctx : c.n_ctx;
  const Tensor tokens = Tensor::placeholder("tokens", DType::i64, {m});
  const Tensor positions = Tensor::placeholder("positions", DType::i64, {m});
  std::vector<Tensor> cache_in, cache_out;
  std::vector<ir::Value> inputs{tokens.value(), positions.value()};
  for (int64_t l = 0; l < c.n_layer; ++l) {
    for (const char* kind : {"k", "v"}) {
      cache_in.push_back(
          Tensor::placeholder(fmt::format("cache_{}{}", kind, l), cache, {rows, c.n_head_kv, c.head_dim}));
      inputs.push_back(cache_in.back().value());
    }
  }
  cache_out.resize(cache_in.size());
  // The new rows go in at their positions (in place: the outputs alias the inputs), then token i
  // attends to cache rows 0..positions[i]: earlier chunks and the causal part of its own.
  const Attend attend = [&](int64_t layer, const Tensor& q, const Tensor& k, const Tensor& v) {
    const auto i = static_cast<size_t>(2 * layer);
    cache_out[i] = ops::index_copy(cache_in[i], 0, positions, ops::cast(k, cache));
    cache_out[i + 1] = ops::index_copy(cache_in[i + 1], 0, positions, ops::cast(v, cache));
    const Tensor o = ops::kv_cache_attention(q, cache_out[i], cache_out[i + 1], positions);
    return ops::reshape(o, {m, c.n_head * c.head_dim});
  };
  const Tensor logits = model.forward(tokens, positions, attend, last_row_only);
  std::vector<ir::Value> outputs{logits.value()};
  DecodeGraph d;
  for (size_t j = 0; j < cache_out.size(); ++j) {
    outputs.push_back(cache_out[j].value());
    d.aliases.push_back({static_cast<int>(1 + j), static_cast<int>(2 + j)});
  }
  d.graph = ir::Graph::build(inputs, outputs, std::string(arch_name(c.arch)) + "_decode");
  return d;
}

Decoder::Decoder(const LlmModel& model, backends::Backend& backend, int64_t n_ctx, DType cache)
    : model_(model), backend_(backend), n_ctx_(n_ctx > 0 ? n_ctx : model.config().n_ctx), cache_dtype_(cache) {
  const LlmConfig& c = model.config();
  if (n_ctx_ > c.n_ctx) {
    fail("{}: a context of {} tokens is longer than the model's {} ({})", model.file().source(), n_ctx_, c.n_ctx,
         c.key("context_length"));
  }
  // The cache lives where the backend computes (device memory on a GPU), so steps update it in place
  // instead of copying it in and out.
  Device& device = backend.device();
  for (int64_t i = 0; i < 2 * c.n_layer; ++i) {
    cache_.push_back(Array::zeros(cache_dtype_, {n_ctx_, c.n_head_kv, c.head_dim}).to(device));
  }
}

Array Decoder::step(const std::vector<int64_t>& tokens, bool last_row_only) {
  model_.check_tokens(tokens);
  const auto m = static_cast<int64_t>(tokens.size());
  const LlmConfig& c = model_.config();
  if (position_ + m > n_ctx_) {
    fail("{}: decoding {} more tokens at position {} would pass the context length {}{}", model_.file().source(), m,
         position_, n_ctx_, n_ctx_ == c.n_ctx ? " (" + c.key("context_length") + ")" : std::string(" (the context this decoder was made with)"));
  }
  // One token's logits are its last row's: the m = 1 graph serves both.
  const bool last = last_row_only && m > 1;
  auto& exe = by_length_[{m, last}];
  if (!exe) {
    const DecodeGraph d = decode_graph(model_, m, n_ctx_, last, cache_dtype_);
    exe = backend_.compile(d.graph, backends::CompileSpec{d.aliases});
  }
  std::vector<int64_t> positions(tokens.size());
  std::iota(positions.begin(), positions.end(), position_);
  std::vector<Array> inputs{Array::from_vector(tokens, {m}), Array::from_vector(positions, {m})};
  inputs.insert(inputs.end(), cache_.begin(), cache_.end());
  std::vector<Array> outputs{Array::empty(DType::f32, {last ? 1 : m, c.n_vocab})};
  outputs.insert(outputs.end(), cache_.begin(), cache_.end());
  exe->run_into(inputs, outputs);  // the caches are updated in place
  position_ += m;
  return outputs[0];
}

}  // namespace tessera::models::llm
