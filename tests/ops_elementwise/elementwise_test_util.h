#pragma once
// Helpers for the elementwise suites: building tensors of any dtype from doubles and a table of the
// unary ops with independent scalar formulas.
#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "test_util.h"

namespace tessera::test {

inline Tensor tensor_of(const std::vector<double>& v, DType dtype = DType::f64, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return Tensor::from_array(Array::from_vector(v, shape).astype(dtype));
}

// Values of `v` stored as `dtype` and read back (what an op sees after its input was rounded).
inline std::vector<double> stored_as(const std::vector<double>& v, DType dtype) {
  return Array::from_vector(v, {static_cast<int64_t>(v.size())}).astype(dtype).to_f64();
}

// Relative tolerance that covers one rounding of the result in `dtype` (and of f32 intermediates).
inline double tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return 1e-13;
    case DType::f32:
      return 2e-6;
    case DType::f16:
      return 1e-3;
    case DType::bf16:
      return 8e-3;
    default:
      return 0;
  }
}

// Values in +-[0.2, 1.5], away from the kinks of relu/abs/sign/floor/... for gradient checks.
inline Array away_from_kinks(const Shape& shape, uint64_t seed) {
  Array a = random_array(shape, seed, 0.2, 1.5);
  double* p = a.data<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (i % 2) p[i] = -p[i];
    // Keep floor/ceil/round away from integers and half-integers.
    const double frac = std::abs(p[i]) - std::floor(std::abs(p[i]));
    if (std::abs(frac - 0.5) < 0.05 || frac < 0.05 || frac > 0.95) p[i] += p[i] > 0 ? 0.13 : -0.13;
  }
  return a;
}

struct UnaryCase {
  std::string name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> formula;  // computed independently in double
  double lo, hi;                          // a domain where the formula is accurate
};

inline double gelu_exact_formula(double x) {
  return x * 0.5 * std::erfc(-x / std::sqrt(2.0));
}
inline double gelu_tanh_formula(double x) {
  const double inner = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * std::pow(x, 3));
  return 0.5 * x * (1.0 + std::tanh(inner));
}

inline std::vector<UnaryCase> unary_cases() {
  return {
      {"neg", [](const Tensor& x) { return ops::neg(x); }, [](double x) { return -x; }, -3, 3},
      {"abs", [](const Tensor& x) { return ops::abs(x); }, [](double x) { return std::fabs(x); }, -3, 3},
      {"sign", [](const Tensor& x) { return ops::sign(x); }, [](double x) { return x > 0   ? 1.0
                                                                                   : x < 0 ? -1.0
                                                                                           : 0.0; },
       -3, 3},
      {"exp", [](const Tensor& x) { return ops::exp(x); }, [](double x) { return std::exp(x); }, -5, 5},
      {"expm1", [](const Tensor& x) { return ops::expm1(x); }, [](double x) { return std::expm1(x); }, -3, 3},
      {"log", [](const Tensor& x) { return ops::log(x); }, [](double x) { return std::log(x); }, 0.01, 10},
      {"log1p", [](const Tensor& x) { return ops::log1p(x); }, [](double x) { return std::log1p(x); }, -0.9, 5},
      {"sqrt", [](const Tensor& x) { return ops::sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 10},
      {"rsqrt", [](const Tensor& x) { return ops::rsqrt(x); }, [](double x) { return std::pow(x, -0.5); }, 0.01, 10},
      {"square", [](const Tensor& x) { return ops::square(x); }, [](double x) { return x * x; }, -3, 3},
      {"reciprocal", [](const Tensor& x) { return ops::reciprocal(x); }, [](double x) { return 1.0 / x; }, 0.1, 5},
      {"sin", [](const Tensor& x) { return ops::sin(x); }, [](double x) { return std::sin(x); }, -6, 6},
      {"cos", [](const Tensor& x) { return ops::cos(x); }, [](double x) { return std::cos(x); }, -6, 6},
      {"tanh", [](const Tensor& x) { return ops::tanh(x); },
       [](double x) { return (std::exp(2 * x) - 1) / (std::exp(2 * x) + 1); }, -4, 4},
      {"erf", [](const Tensor& x) { return ops::erf(x); }, [](double x) { return 1.0 - std::erfc(x); }, -3, 3},
      {"sigmoid", [](const Tensor& x) { return ops::sigmoid(x); }, [](double x) { return 1.0 / (1.0 + std::exp(-x)); },
       -8, 8},
      {"relu", [](const Tensor& x) { return ops::relu(x); }, [](double x) { return x > 0 ? x : 0.0; }, -3, 3},
      {"leaky_relu", [](const Tensor& x) { return ops::leaky_relu(x, 0.2); },
       [](double x) { return x > 0 ? x : 0.2 * x; }, -3, 3},
      {"elu", [](const Tensor& x) { return ops::elu(x, 1.5); },
       [](double x) { return x > 0 ? x : 1.5 * (std::exp(x) - 1); }, -3, 3},
      {"gelu", [](const Tensor& x) { return ops::gelu(x); }, gelu_exact_formula, -4, 4},
      {"gelu_tanh", [](const Tensor& x) { return ops::gelu(x, true); }, gelu_tanh_formula, -4, 4},
      {"silu", [](const Tensor& x) { return ops::silu(x); }, [](double x) { return x / (1.0 + std::exp(-x)); }, -8, 8},
      {"softplus", [](const Tensor& x) { return ops::softplus(x); },
       [](double x) { return std::log(1.0 + std::exp(x)); }, -8, 8},
      {"softplus_beta2", [](const Tensor& x) { return ops::softplus(x, 2.0, 20.0); },
       [](double x) { return std::log(1.0 + std::exp(2 * x)) / 2; }, -5, 5},
      {"floor", [](const Tensor& x) { return ops::floor(x); }, [](double x) { return std::floor(x); }, -3, 3},
      {"ceil", [](const Tensor& x) { return ops::ceil(x); }, [](double x) { return std::ceil(x); }, -3, 3},
      {"round", [](const Tensor& x) { return ops::round(x); }, [](double x) { return std::nearbyint(x); }, -3, 3},
  };
}

}  // namespace tessera::test
