// Activations, each with the spec's attribute defaults.
#include <limits>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

Tensor clamp_between(const Tensor& x, double lo, double hi) { return ops::clamp(x, lo, hi); }

std::vector<Tensor> clip(NodeContext& c) {
  Tensor x = c.input(0);
  if (c.version() < 11) {
    const double lo = c.attr_float("min", -std::numeric_limits<double>::infinity());
    const double hi = c.attr_float("max", std::numeric_limits<double>::infinity());
    return {ops::minimum(ops::maximum(x, scalar_as(x, lo)), scalar_as(x, hi))};
  }
  // min then max, so that min > max gives max everywhere (as numpy.clip).
  if (c.has_input(1)) x = ops::maximum(x, c.input(1));
  if (c.has_input(2)) x = ops::minimum(x, c.input(2));
  return {x};
}

}  // namespace

void add_activation_translations(TranslationTable& t) {
  t.add("Relu", {1, 6, 13, 14}, 6, [](NodeContext& c) -> std::vector<Tensor> { return {ops::relu(c.input(0))}; });
  t.add("Sigmoid", {1, 6, 13}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    require_floating(c, c.input(0));
    return {ops::sigmoid(c.input(0))};
  });
  t.add("Tanh", {1, 6, 13}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    require_floating(c, c.input(0));
    return {ops::tanh(c.input(0))};
  });
  t.add("LeakyRelu", {1, 6, 16}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    return {ops::leaky_relu(c.input(0), c.attr_float("alpha", 0.01f))};
  });
  t.add("Elu", {1, 6}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    return {ops::elu(c.input(0), c.attr_float("alpha", 1.0))};
  });
  t.add("Selu", {1, 6}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    const double alpha = c.attr_float("alpha", 1.67326319217681884765625);
    const double gamma = c.attr_float("gamma", 1.05070102214813232421875);
    const Tensor zero = scalar_as(x, 0.0);
    return {ops::where(ops::gt(x, zero), x * gamma, (ops::exp(x) * alpha - alpha) * gamma)};
  });
  t.add("Celu", {12}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    const double alpha = c.attr_float("alpha", 1.0);
    const Tensor zero = scalar_as(x, 0.0);
    return {ops::maximum(x, zero) + ops::minimum(zero, (ops::exp(x / alpha) - 1.0) * alpha)};
  });
  t.add("HardSigmoid", {1, 6}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    const double alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f);
    return {clamp_between(x * alpha + beta, 0.0, 1.0)};
  });
  t.add("HardSwish", {14}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    return {x * clamp_between(x * (1.0 / 6.0) + 0.5, 0.0, 1.0)};
  });
  t.add("Softplus", {1}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    require_floating(c, x);
    return {ops::softplus(x)};
  });
  t.add("Mish", {18}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    require_floating(c, x);
    return {x * ops::tanh(ops::softplus(x))};
  });
  t.add("Softsign", {1}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    return {x / (ops::abs(x) + 1.0)};
  });
  t.add("ThresholdedRelu", {10}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    const double alpha = c.attr_float("alpha", 1.0);
    return {ops::where(ops::gt(x, scalar_as(x, alpha)), x, scalar_as(x, 0.0))};
  });
  t.add("Shrink", {9}, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    const double bias = c.attr_float("bias", 0.0), lambd = c.attr_float("lambd", 0.5);
    const Tensor zero = scalar_as(x, 0.0);
    return {ops::where(ops::lt(x, scalar_as(x, -lambd)), x + bias,
                       ops::where(ops::gt(x, scalar_as(x, lambd)), x - bias, zero))};
  });
  t.add("PRelu", {1, 6, 7, 9, 16}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    Tensor slope = c.input(1);
    // PRelu-6 applies a [C] slope per channel; from version 7 the slope broadcasts as NumPy does.
    if (c.version() < 7 && slope.rank() == 1 && x.rank() >= 2 && slope.numel() == x.dim(1) && slope.numel() > 1) {
      Shape s(static_cast<size_t>(x.rank()), 1);
      s[1] = slope.numel();
      slope = ops::reshape(slope, s);
    }
    return {ops::where(ops::lt(x, scalar_as(x, 0.0)), x * slope, x)};
  });
  t.add("Clip", {1, 6, 11, 12, 13}, 6, clip);
}

}  // namespace tessera::io::onnx
