#pragma once
// Parameter initialisation from a seeded generator (PyTorch's formulas, so models start comparably).
// Each returns a leaf tensor holding concrete data.
#include "tessera/api/tensor.h"
#include "tessera/ops/random.h"

namespace tessera::nn::init {

// Each element drawn from U(low, high), advancing `gen`.
Tensor uniform(const Shape& shape, double low, double high, ops::Generator& gen, DType dtype = DType::f32);
// Each element drawn from N(mean, stddev^2), advancing `gen`.
Tensor normal(const Shape& shape, double mean, double stddev, ops::Generator& gen, DType dtype = DType::f32);
Tensor zeros(const Shape& shape, DType dtype = DType::f32);  // every element 0 (biases, shifts)
Tensor ones(const Shape& shape, DType dtype = DType::f32);   // every element 1 (norm scales)

// fan_in / fan_out of a weight: [out, in, k...] -> in * prod(k), out * prod(k).
int64_t fan_in(const Shape& weight_shape);
int64_t fan_out(const Shape& weight_shape);  // see fan_in

// gain for a nonlinearity ("linear", "relu", "tanh", "leaky_relu" with slope a, "sigmoid").
double gain(const std::string& nonlinearity, double a = 0.0);

// U(-b, b) with b = gain * sqrt(3 / fan_in); with a = sqrt(5) and "leaky_relu" this is PyTorch's
// default for Linear and Conv weights (b = 1 / sqrt(fan_in)).
Tensor kaiming_uniform(const Shape& shape, ops::Generator& gen, double a = 0.0,
                       const std::string& nonlinearity = "leaky_relu", DType dtype = DType::f32);
// N(0, std^2) with std = gain / sqrt(fan_in) (He et al. 2015).
Tensor kaiming_normal(const Shape& shape, ops::Generator& gen, double a = 0.0,
                      const std::string& nonlinearity = "leaky_relu", DType dtype = DType::f32);
// U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010).
Tensor xavier_uniform(const Shape& shape, ops::Generator& gen, double gain = 1.0, DType dtype = DType::f32);
// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal(const Shape& shape, ops::Generator& gen, double gain = 1.0, DType dtype = DType::f32);

}  // namespace tessera::nn::init
