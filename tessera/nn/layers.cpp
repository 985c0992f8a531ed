#include "tessera/nn/layers.h"

#include <cmath>

#include "tessera/nn/init.h"
#include "tessera/ops/ops.h"

namespace tessera::nn {

namespace {
ops::Generator& gen_or_default(ops::Generator* gen) { return gen ? *gen : ops::default_generator(); }
}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias, ops::Generator* gen)
    : in_(in_features), out_(out_features) {
  TESSERA_CHECK(in_features > 0 && out_features > 0, "Linear: sizes must be positive, got in={} out={}", in_features,
                out_features);
  ops::Generator& g = gen_or_default(gen);
  weight = init::kaiming_uniform({out_features, in_features}, g, std::sqrt(5.0));
  register_parameter("weight", &weight);
  if (with_bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    bias = init::uniform({out_features}, -bound, bound, g);
    register_parameter("bias", &bias);
  }
}

Tensor Linear::forward(const Tensor& x) {
  TESSERA_CHECK(x.rank() >= 1 && x.dim(-1) == in_, "{}: expected input with last dimension {}, got {}", name(), in_,
                ir::type_str(x.type()));
  return ops::linear(x, weight, bias);
}

std::string Linear::name() const { return fmt::format("Linear({}, {}{})", in_, out_, bias.defined() ? "" : ", no bias"); }

Embedding::Embedding(int64_t num_embeddings, int64_t dim, ops::Generator* gen) {
  weight = init::normal({num_embeddings, dim}, 0.0, 1.0, gen_or_default(gen));
  register_parameter("weight", &weight);
}

Tensor Embedding::forward(const Tensor& indices) { return ops::embedding(weight, indices); }
std::string Embedding::name() const { return fmt::format("Embedding({}, {})", weight.dim(0), weight.dim(1)); }

Dropout::Dropout(double p, ops::Generator* gen) : p_(p), gen_(gen) {
  TESSERA_CHECK(p >= 0.0 && p <= 1.0, "Dropout: p must be in [0, 1], got {}", p);
}

Tensor Dropout::forward(const Tensor& x) { return ops::dropout(x, p_, is_training(), gen_or_default(gen_)); }
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

std::shared_ptr<Module> ReLU() { return std::make_shared<Lambda>("ReLU", [](const Tensor& x) { return ops::relu(x); }); }
std::shared_ptr<Module> GELU(bool tanh_approximation) {
  return std::make_shared<Lambda>(tanh_approximation ? "GELU(tanh)" : "GELU",
                                  [tanh_approximation](const Tensor& x) { return ops::gelu(x, tanh_approximation); });
}
std::shared_ptr<Module> Tanh() { return std::make_shared<Lambda>("Tanh", [](const Tensor& x) { return ops::tanh(x); }); }
std::shared_ptr<Module> Sigmoid() {
  return std::make_shared<Lambda>("Sigmoid", [](const Tensor& x) { return ops::sigmoid(x); });
}
std::shared_ptr<Module> SiLU() { return std::make_shared<Lambda>("SiLU", [](const Tensor& x) { return ops::silu(x); }); }
std::shared_ptr<Module> LeakyReLU(double slope) {
  return std::make_shared<Lambda>(fmt::format("LeakyReLU({})", slope),
                                  [slope](const Tensor& x) { return ops::leaky_relu(x, slope); });
}
std::shared_ptr<Module> ELU(double alpha) {
  return std::make_shared<Lambda>(fmt::format("ELU({})", alpha), [alpha](const Tensor& x) { return ops::elu(x, alpha); });
}
std::shared_ptr<Module> Softmax(int64_t axis) {
  return std::make_shared<Lambda>("Softmax", [axis](const Tensor& x) { return ops::softmax(x, axis); });
}
std::shared_ptr<Module> LogSoftmax(int64_t axis) {
  return std::make_shared<Lambda>("LogSoftmax", [axis](const Tensor& x) { return ops::log_softmax(x, axis); });
}

}  // namespace tessera::nn
