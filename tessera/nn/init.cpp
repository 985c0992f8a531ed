#include "tessera/nn/init.h"

#include <cmath>

#include "tessera/ops/ops.h"

namespace tessera::nn::init {

namespace {
Tensor leaf(const Tensor& t) { return Tensor::from_array(t.array()); }
}  // namespace

Tensor uniform(const Shape& shape, double low, double high, ops::Generator& gen, DType dtype) {
  return leaf(ops::uniform(shape, low, high, gen, dtype));
}
Tensor normal(const Shape& shape, double mean, double stddev, ops::Generator& gen, DType dtype) {
  return leaf(ops::normal(shape, mean, stddev, gen, dtype));
}
Tensor zeros(const Shape& shape, DType dtype) { return Tensor::from_array(Array::zeros(dtype, shape)); }
Tensor ones(const Shape& shape, DType dtype) { return Tensor::from_array(Array::full(dtype, shape, 1.0)); }

int64_t fan_in(const Shape& s) {
  TESSERA_CHECK(s.size() >= 2, "init: fan_in needs a weight of rank >= 2, got shape {}", shape_str(s));
  int64_t receptive = 1;
  for (size_t i = 2; i < s.size(); ++i) receptive *= s[i];
  return s[1] * receptive;
}

int64_t fan_out(const Shape& s) {
  TESSERA_CHECK(s.size() >= 2, "init: fan_out needs a weight of rank >= 2, got shape {}", shape_str(s));
  int64_t receptive = 1;
  for (size_t i = 2; i < s.size(); ++i) receptive *= s[i];
  return s[0] * receptive;
}

double gain(const std::string& nonlinearity, double a) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid" || nonlinearity == "conv") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + a * a));
  fail("init: unknown nonlinearity '{}' (expected linear, sigmoid, tanh, relu or leaky_relu)", nonlinearity);
}

Tensor kaiming_uniform(const Shape& shape, ops::Generator& gen, double a, const std::string& nonlinearity,
                       DType dtype) {
  const double bound = gain(nonlinearity, a) * std::sqrt(3.0 / static_cast<double>(fan_in(shape)));
  return init::uniform(shape, -bound, bound, gen, dtype);
}

Tensor kaiming_normal(const Shape& shape, ops::Generator& gen, double a, const std::string& nonlinearity,
                      DType dtype) {
  const double stddev = gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan_in(shape)));
  return init::normal(shape, 0.0, stddev, gen, dtype);
}

Tensor xavier_uniform(const Shape& shape, ops::Generator& gen, double g, DType dtype) {
  const double bound = g * std::sqrt(6.0 / static_cast<double>(fan_in(shape) + fan_out(shape)));
  return init::uniform(shape, -bound, bound, gen, dtype);
}

Tensor xavier_normal(const Shape& shape, ops::Generator& gen, double g, DType dtype) {
  const double stddev = g * std::sqrt(2.0 / static_cast<double>(fan_in(shape) + fan_out(shape)));
  return init::normal(shape, 0.0, stddev, gen, dtype);
}

}  // namespace tessera::nn::init
