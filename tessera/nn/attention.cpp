#include "tessera/nn/attention.h"

#include <optional>

#include "tessera/ir/origin.h"
#include "tessera/nn/init.h"
#include "tessera/ops/ops.h"

namespace tessera::nn {

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, bool with_bias, ops::Generator& gen)
    : embed_dim_(embed_dim), heads_(num_heads) {
  TESSERA_CHECK(num_heads > 0 && embed_dim % num_heads == 0,
                "MultiheadAttention: embed_dim {} is not divisible by num_heads {}", embed_dim, num_heads);
  in_proj_weight = init::xavier_uniform({3 * embed_dim, embed_dim}, gen);
  register_parameter("in_proj_weight", &in_proj_weight);
  if (with_bias) {
    in_proj_bias = init::zeros({3 * embed_dim});
    register_parameter("in_proj_bias", &in_proj_bias);
  }
  out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim, embed_dim, with_bias, gen));
}

Tensor MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& mask,
                                   bool is_causal) {
  // Called directly (not through operator()), the module still names the nodes it builds.
  const std::string label = origin_label();
  const auto& outer = ir::current_origin();
  const bool scoped =
      outer && outer->size() >= label.size() && outer->compare(outer->size() - label.size(), label.size(), label) == 0;
  std::optional<ir::OriginScope> origin;
  if (!scoped) origin.emplace(label);
  TESSERA_CHECK(query.rank() == 3 && key.rank() == 3 && value.rank() == 3 && query.dim(-1) == embed_dim_ &&
                    key.dim(-1) == embed_dim_ && value.dim(-1) == embed_dim_,
                "{}: expected query/key/value [N, L, {}], got {}, {}, {}", name(), embed_dim_,
                ir::type_str(query.type()), ir::type_str(key.type()), ir::type_str(value.type()));
  const int64_t e = embed_dim_, d = embed_dim_ / heads_;
  const std::vector<Tensor> w = ops::chunk(in_proj_weight, 3, 0);
  std::vector<Tensor> b;
  if (in_proj_bias.defined()) b = ops::chunk(in_proj_bias, 3, 0);
  auto project = [&](const Tensor& x, int i) {
    Tensor y = ops::matmul(x, ops::transpose(w[static_cast<size_t>(i)]));
    if (!b.empty()) y = y + b[static_cast<size_t>(i)];
    // [N, L, E] -> [N, H, L, D]
    return ops::permute(ops::reshape(y, {x.dim(0), x.dim(1), heads_, d}), {0, 2, 1, 3});
  };
  const Tensor q = project(query, 0), k = project(key, 1), v = project(value, 2);
  Tensor attn = ops::scaled_dot_product_attention(q, k, v, mask, is_causal);
  attn = ops::reshape(ops::permute(attn, {0, 2, 1, 3}), {query.dim(0), query.dim(1), e});
  return (*out_proj)(attn);
}

std::string MultiheadAttention::name() const {
  return fmt::format("MultiheadAttention(embed_dim={}, heads={})", embed_dim_, heads_);
}

}  // namespace tessera::nn
