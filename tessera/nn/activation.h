#pragma once
// Activation modules, PyTorch's nn.ReLU, nn.GELU, ...: stateless classes built like every other module,
// std::make_shared<nn::ReLU>(), each a Lambda over its ops:: function.
#include <cstdint>

#include "tessera/nn/layers.h"

namespace tessera::nn {

class ReLU : public Lambda {
 public:
  ReLU();
};

// tanh_approximation: PyTorch's approximate="tanh".
class GELU : public Lambda {
 public:
  explicit GELU(bool tanh_approximation = false);
};

class Tanh : public Lambda {
 public:
  Tanh();
};

class Sigmoid : public Lambda {
 public:
  Sigmoid();
};

class SiLU : public Lambda {
 public:
  SiLU();
};

class LeakyReLU : public Lambda {
 public:
  explicit LeakyReLU(double negative_slope = 0.01);
};

class ELU : public Lambda {
 public:
  explicit ELU(double alpha = 1.0);
};

class Softmax : public Lambda {
 public:
  explicit Softmax(int64_t axis = -1);
};

class LogSoftmax : public Lambda {
 public:
  explicit LogSoftmax(int64_t axis = -1);
};

}  // namespace tessera::nn
