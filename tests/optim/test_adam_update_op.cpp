// The adam_update op: values against an independent f64 formula (Adam and AdamW), its decomposition
// against its reference, f32 rounding, and errors naming the op and the offending input.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "test_util.h"

namespace tessera::test {
namespace {

struct Inputs {
  Tensor p, g, m, v;
};

Inputs inputs(DType dtype) {
  auto make = [&](std::vector<double> values) {
    return Tensor::from_array(Array::from_vector(values, {2, 2}).astype(dtype));
  };
  return {make({1.0, -2.0, 0.5, 3.0}), make({0.1, 0.2, -0.3, 0.0}), make({0.01, 0.0, -0.02, 0.5}),
          make({0.001, 0.0, 0.004, 0.2})};
}

// One Adam/AdamW step in f64, written from PyTorch's documented update rule.
std::vector<std::vector<double>> expected_step(const Inputs& in, double lr, int t, double wd, bool decoupled) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<double> p = in.p.to_vector<double>(), g = in.g.to_vector<double>(), m = in.m.to_vector<double>(),
                      v = in.v.to_vector<double>();
  for (size_t i = 0; i < p.size(); ++i) {
    if (decoupled) {
      p[i] *= 1 - lr * wd;
    } else {
      g[i] += wd * p[i];
    }
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    const double m_hat = m[i] / (1 - std::pow(b1, t)), v_hat = v[i] / (1 - std::pow(b2, t));
    p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
  }
  return {p, m, v};
}

std::vector<Tensor> step(const Inputs& in, double lr, int t, double wd, bool decoupled) {
  return ops::adam_update(in.p, in.g, in.m, in.v, Tensor::scalar(lr, DType::f64), Tensor::scalar(t, DType::f64),
                          {.weight_decay = wd, .decoupled = decoupled});
}

TEST(AdamUpdateOp, AdamMatchesTheUpdateRule) {
  const Inputs in = inputs(DType::f64);
  const auto want = expected_step(in, 1e-2, 3, 0.1, false);
  const auto got = step(in, 1e-2, 3, 0.1, false);
  for (size_t k = 0; k < 3; ++k) expect_close(got[k], want[k], 1e-13, 1e-12);
}

TEST(AdamUpdateOp, AdamWDecaysTheParameterNotTheGradient) {
  const Inputs in = inputs(DType::f64);
  const auto want = expected_step(in, 1e-2, 1, 0.5, true);
  const auto got = step(in, 1e-2, 1, 0.5, true);
  for (size_t k = 0; k < 3; ++k) expect_close(got[k], want[k], 1e-13, 1e-12);
}

TEST(AdamUpdateOp, F32IsTheF64ResultRoundedOnce) {
  const Inputs in32 = inputs(DType::f32);
  const auto want = expected_step(inputs(DType::f64), 1e-3, 7, 0.0, false);
  const auto got = step(in32, 1e-3, 7, 0.0, false);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(got[k].dtype(), DType::f32);
    const std::vector<float> values = got[k].to_vector<float>();
    for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(values[i], want[k][i], 2e-7 * (1 + std::abs(want[k][i])));
  }
}

TEST(AdamUpdateOp, DecompositionAgreesWithTheReference) {
  const Inputs in = inputs(DType::f64);
  for (bool decoupled : {false, true}) {
    const auto direct = step(in, 3e-3, 4, 0.2, decoupled);
    const ir::OpDef& def = ir::OpRegistry::instance().get("adam_update");
    ASSERT_TRUE(static_cast<bool>(def.decompose));
    const std::vector<ir::Value> parts = def.decompose(
        {in.p.value(), in.g.value(), in.m.value(), in.v.value(), Tensor::scalar(3e-3, DType::f64).value(),
         Tensor::scalar(4.0, DType::f64).value()},
        direct[0].value().node()->attrs());
    for (size_t k = 0; k < 3; ++k) expect_close(Tensor(parts[k]), direct[k].to_vector<double>(), 1e-14, 1e-12);
  }
}

TEST(AdamUpdateOp, ShapeAndTypeErrorsNameTheInput) {
  const Inputs in = inputs(DType::f32);
  const Tensor lr = Tensor::scalar(1e-3, DType::f64), t = Tensor::scalar(1.0, DType::f64);
  const Tensor wrong_shape = ops::zeros({3}, DType::f32);
  EXPECT_TESSERA_ERROR(ops::adam_update(in.p, wrong_shape, in.m, in.v, lr, t), "adam_update", "f32[3]", "input 1");
  EXPECT_TESSERA_ERROR(ops::adam_update(in.p, in.g, in.m, in.v, Tensor::scalar(1e-3, DType::f32), t), "adam_update",
                       "lr must be an f64 scalar");
  const Tensor ints = ops::zeros({2, 2}, DType::i32);
  EXPECT_TESSERA_ERROR(ops::adam_update(ints, ints, ints, ints, lr, t), "adam_update", "floating");
  EXPECT_TESSERA_ERROR(ops::adam_update(in.p, in.g, in.m, in.v, lr, t, {.beta1 = 1.0}), "adam_update", "beta1");
}

}  // namespace
}  // namespace tessera::test
