#pragma once
// Scalar activations shared by the fused epilogues of GEMM and convolution. The formulas match the
// IR ops of the same names (tessera/ops/unary.cpp) so fused and unfused graphs agree.
#include <cmath>
#include <numbers>

#include "tessera/kernels/cpu/gemm.h"

namespace tessera::kernels {

inline float activation_value(Activation act, float x) {
  switch (act) {
    case Activation::none:
      return x;
    case Activation::relu:
      return x < 0.0f ? 0.0f : x;  // NaN passes through, as in the IR op
    case Activation::gelu:
      return 0.5f * x * (1.0f + std::erf(x / std::numbers::sqrt2_v<float>));
    case Activation::gelu_tanh: {
      const float c = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
    }
    case Activation::silu:
      return x >= 0.0f ? x / (1.0f + std::exp(-x)) : x * std::exp(x) / (1.0f + std::exp(x));
    case Activation::sigmoid:
      if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
      return std::exp(x) / (1.0f + std::exp(x));
    case Activation::tanh:
      return std::tanh(x);
    case Activation::relu6:
      // As the IR's maximum then minimum: NaN propagates, -0 becomes +0.
      if (std::isnan(x)) return x;
      return x > 0.0f ? (x < 6.0f ? x : 6.0f) : 0.0f;
  }
  return x;
}

// Applies `act` in place to n contiguous floats (vectorised for relu).
void apply_activation(Activation act, float* x, int64_t n);

}  // namespace tessera::kernels
