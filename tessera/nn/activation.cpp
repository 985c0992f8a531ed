#include "tessera/nn/activation.h"

#include "tessera/ops/ops.h"

namespace tessera::nn {

ReLU::ReLU() : Lambda("ReLU", [](const Tensor& x) { return ops::relu(x); }) {}

GELU::GELU(bool tanh_approximation)
    : Lambda(tanh_approximation ? "GELU(tanh)" : "GELU",
             [tanh_approximation](const Tensor& x) { return ops::gelu(x, tanh_approximation); }) {}

Tanh::Tanh() : Lambda("Tanh", [](const Tensor& x) { return ops::tanh(x); }) {}

Sigmoid::Sigmoid() : Lambda("Sigmoid", [](const Tensor& x) { return ops::sigmoid(x); }) {}

SiLU::SiLU() : Lambda("SiLU", [](const Tensor& x) { return ops::silu(x); }) {}

LeakyReLU::LeakyReLU(double slope)
    : Lambda(fmt::format("LeakyReLU({})", slope), [slope](const Tensor& x) { return ops::leaky_relu(x, slope); }) {}

ELU::ELU(double alpha)
    : Lambda(fmt::format("ELU({})", alpha), [alpha](const Tensor& x) { return ops::elu(x, alpha); }) {}

Softmax::Softmax(int64_t axis) : Lambda("Softmax", [axis](const Tensor& x) { return ops::softmax(x, axis); }) {}

LogSoftmax::LogSoftmax(int64_t axis)
    : Lambda("LogSoftmax", [axis](const Tensor& x) { return ops::log_softmax(x, axis); }) {}

}  // namespace tessera::nn
