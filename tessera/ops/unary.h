#pragma once
// Elementwise functions of one tensor. Transcendental functions need a floating input (f32, f64,
// f16, bf16; cast integers first); neg, abs, sign, square, relu accept integers too.
#include "tessera/api/tensor.h"

namespace tessera::ops {

// Gradients at kinks (as PyTorch): abs'(0) = 0 (it is g * sign(x)); relu'(0) = 0 (the gradient flows
// where the output is > 0); leaky_relu'(0) = negative_slope and elu'(0) = alpha (the left branch).
Tensor neg(const Tensor& x);                                       // -x
Tensor abs(const Tensor& x);                                       // |x|
Tensor sign(const Tensor& x);                                      // -1, 0 or 1
Tensor exp(const Tensor& x);                                       // e^x
Tensor expm1(const Tensor& x);                                     // e^x - 1, exact near 0
Tensor log(const Tensor& x);                                       // natural logarithm
Tensor log1p(const Tensor& x);                                     // log(1 + x), exact near 0
Tensor sqrt(const Tensor& x);                                      // square root
Tensor rsqrt(const Tensor& x);                                     // 1 / sqrt(x)
Tensor square(const Tensor& x);                                    // x * x
Tensor reciprocal(const Tensor& x);                                // 1 / x
Tensor sin(const Tensor& x);                                       // sine
Tensor cos(const Tensor& x);                                       // cosine
Tensor tanh(const Tensor& x);                                      // hyperbolic tangent
Tensor erf(const Tensor& x);                                       // the error function
Tensor sigmoid(const Tensor& x);                                   // 1 / (1 + e^-x)
Tensor relu(const Tensor& x);                                      // max(x, 0)
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);  // x, or negative_slope * x below 0
Tensor elu(const Tensor& x, double alpha = 1.0);                   // x, or alpha * (e^x - 1) below 0
// Exact GELU uses erf; the tanh approximation is GPT-2's.
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
Tensor silu(const Tensor& x);  // x * sigmoid(x)
// log(1 + exp(beta x)) / beta, linear above `threshold` (as PyTorch).
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor floor(const Tensor& x);  // rounds down
Tensor ceil(const Tensor& x);   // rounds up
Tensor round(const Tensor& x);  // halves to even, as NumPy and PyTorch
Tensor logical_not(const Tensor& x);  // bool result
Tensor isnan(const Tensor& x);        // bool result
Tensor isinf(const Tensor& x);        // bool result

Tensor cast(const Tensor& x, DType dtype);  // float -> int truncates toward zero and saturates
Tensor stop_gradient(const Tensor& x);      // identity whose gradient is zero

}  // namespace tessera::ops
