#pragma once
// Activation modules, PyTorch's nn.ReLU, nn.GELU, ...: stateless classes built like every other module,
// std::make_shared<nn::ReLU>(), each a Lambda over its ops:: function.
#include <cstdint>

#include "tessera/nn/layers.h"

namespace tessera::nn {

// max(x, 0).
class ReLU : public Lambda {
 public:
  ReLU();
};

// x * Phi(x) with Phi the standard normal CDF; tanh_approximation: PyTorch's approximate="tanh".
class GELU : public Lambda {
 public:
  explicit GELU(bool tanh_approximation = false);
};

// tanh(x).
class Tanh : public Lambda {
 public:
  Tanh();
};

// 1 / (1 + exp(-x)).
class Sigmoid : public Lambda {
 public:
  Sigmoid();
};

// x * sigmoid(x), also called swish.
class SiLU : public Lambda {
 public:
  SiLU();
};

// x for x >= 0, negative_slope * x below.
class LeakyReLU : public Lambda {
 public:
  explicit LeakyReLU(double negative_slope = 0.01);
};

// x for x > 0, alpha * (exp(x) - 1) below.
class ELU : public Lambda {
 public:
  explicit ELU(double alpha = 1.0);
};

// exp(x) / sum(exp(x)) along `axis`.
class Softmax : public Lambda {
 public:
  explicit Softmax(int64_t axis = -1);
};

// log(softmax(x)) along `axis`, computed stably.
class LogSoftmax : public Lambda {
 public:
  explicit LogSoftmax(int64_t axis = -1);
};

}  // namespace tessera::nn
