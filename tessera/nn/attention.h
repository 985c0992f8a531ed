#pragma once
// Multi-head attention (PyTorch's nn.MultiheadAttention with batch_first = true).
#include "tessera/nn/layers.h"

namespace tessera::nn {

// Scaled dot-product attention over num_heads heads with input and output projections.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, bool bias = true,
                     ops::Generator& gen = ops::default_generator());
  // query [N, L, E], key/value [N, S, E] -> [N, L, E]. mask as in ops::scaled_dot_product_attention.
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& mask = {},
                 bool is_causal = false);
  Tensor forward(const Tensor& x) override { return forward(x, x, x); }  // self-attention
  std::string name() const override;
  // The stacked q/k/v projection: weight [3E, E], bias [3E] (undefined without bias), as in PyTorch.
  Tensor in_proj_weight, in_proj_bias;
  std::shared_ptr<Linear> out_proj;  // the output projection E -> E

 private:
  int64_t embed_dim_, heads_;
};

}  // namespace tessera::nn
