#include "tessera/nn/layers.h"

#include <cmath>

#include "tessera/nn/init.h"
#include "tessera/ops/ops.h"

namespace tessera::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias, ops::Generator& gen)
    : in_(in_features), out_(out_features) {
  TESSERA_CHECK(in_features > 0 && out_features > 0, "Linear: sizes must be positive, got in={} out={}", in_features,
                out_features);
  weight = init::kaiming_uniform({out_features, in_features}, gen, std::sqrt(5.0));
  register_parameter("weight", &weight);
  if (with_bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    bias = init::uniform({out_features}, -bound, bound, gen);
    register_parameter("bias", &bias);
  }
}

Tensor Linear::forward(const Tensor& x) {
  TESSERA_CHECK(x.rank() >= 1 && x.dim(-1) == in_, "{}: expected input with last dimension {}, got {}", name(), in_,
                ir::type_str(x.type()));
  return ops::linear(x, weight, bias);
}

std::string Linear::name() const { return fmt::format("Linear({}, {}{})", in_, out_, bias.defined() ? "" : ", no bias"); }

Embedding::Embedding(int64_t num_embeddings, int64_t dim, ops::Generator& gen) {
  weight = init::normal({num_embeddings, dim}, 0.0, 1.0, gen);
  register_parameter("weight", &weight);
}

Tensor Embedding::forward(const Tensor& indices) { return ops::embedding(weight, indices); }
std::string Embedding::name() const { return fmt::format("Embedding({}, {})", weight.dim(0), weight.dim(1)); }

Dropout::Dropout(double p, ops::Generator& gen) : p_(p), gen_(&gen) {
  TESSERA_CHECK(p >= 0.0 && p <= 1.0, "Dropout: p must be in [0, 1], got {}", p);
}

Tensor Dropout::forward(const Tensor& x) {
  return ops::dropout(x, p_, is_training(), *gen_);
}
std::string Dropout::name() const { return fmt::format("Dropout(p={})", p_); }

Tensor Flatten::forward(const Tensor& x) { return ops::flatten(x, start_, end_); }

Sequential::Sequential(std::vector<std::shared_ptr<Module>> layers) {
  for (auto& l : layers) add(std::move(l));
}

Sequential& Sequential::add(std::shared_ptr<Module> layer) {
  add_child(std::to_string(layers_.size()), layer);
  layers_.push_back(std::move(layer));
  return *this;
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& l : layers_) y = (*l)(y);
  return y;
}

}  // namespace tessera::nn
