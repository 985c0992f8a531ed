#pragma once
// Independent implementations of PyTorch's documented update rules on std::vector<double>, and a
// driver that feeds an optimiser the same parameter-dependent gradients the references see.
#include <cmath>
#include <functional>
#include <vector>

#include "test_util.h"

namespace tessera::test {

using Vec = std::vector<double>;

// The gradient at step t (1-based) for parameters p: depends on p so that each step differs.
inline Vec gradient_at(const Vec& p, int t) {
  Vec g(p.size());
  for (size_t i = 0; i < p.size(); ++i) g[i] = 2.0 * p[i] + 0.3 * t - 0.25 * static_cast<double>(i) + 0.1;
  return g;
}

inline const Vec kStart{1.0, -2.0, 0.5};

inline Tensor param_from(const Vec& v, DType dtype = DType::f64) {
  Tensor p = Tensor::from_array(Array::from_vector(v, {static_cast<int64_t>(v.size())}).astype(dtype));
  p.set_requires_grad(true);
  return p;
}

// Runs `steps` functional steps, each with gradient_at(current value, t).
inline Vec run_steps(optim::Optimizer& opt, Tensor& p, int steps, int first_t = 1) {
  for (int t = first_t; t < first_t + steps; ++t) {
    const Vec g = gradient_at(p.array().to_f64(), t);
    opt.step({Tensor::from_array(Array::from_vector(g, p.shape()).astype(p.dtype()))});
  }
  return p.array().to_f64();
}

struct SgdRef {
  double lr, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  Vec run(Vec p, int steps) const {
    Vec buf;
    for (int t = 1; t <= steps; ++t) {
      Vec g = gradient_at(p, t);
      for (size_t i = 0; i < p.size(); ++i) g[i] += weight_decay * p[i];
      if (momentum != 0) {
        if (buf.empty()) {
          buf = g;
        } else {
          for (size_t i = 0; i < p.size(); ++i) buf[i] = momentum * buf[i] + (1 - dampening) * g[i];
        }
        for (size_t i = 0; i < p.size(); ++i) g[i] = nesterov ? g[i] + momentum * buf[i] : buf[i];
      }
      for (size_t i = 0; i < p.size(); ++i) p[i] -= lr * g[i];
    }
    return p;
  }
};

enum class AdamKind { Adam, AdamW, RAdam };

struct AdamRef {
  AdamKind kind;
  double lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  int rectified_steps = 0, unrectified_steps = 0;  // RAdam: how often each branch ran

  Vec run(Vec p, int steps) {
    Vec m(p.size(), 0.0), v(p.size(), 0.0);
    const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    for (int t = 1; t <= steps; ++t) {
      Vec g = gradient_at(p, t);
      if (kind == AdamKind::AdamW) {
        for (double& x : p) x *= 1.0 - lr * weight_decay;
      } else {
        for (size_t i = 0; i < p.size(); ++i) g[i] += weight_decay * p[i];
      }
      const double bc1 = 1.0 - std::pow(beta1, t), bc2 = 1.0 - std::pow(beta2, t);
      const double rho_t = rho_inf - 2.0 * t * std::pow(beta2, t) / bc2;
      const bool rectify = rho_t > 5.0;
      if (kind == AdamKind::RAdam) ++(rectify ? rectified_steps : unrectified_steps);
      for (size_t i = 0; i < p.size(); ++i) {
        m[i] = beta1 * m[i] + (1 - beta1) * g[i];
        v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
        const double m_hat = m[i] / bc1;
        if (kind != AdamKind::RAdam) {
          p[i] -= lr * m_hat / (std::sqrt(v[i] / bc2) + eps);
        } else if (!rectify) {
          p[i] -= lr * m_hat;
        } else {
          const double l_t = std::sqrt(bc2) / (std::sqrt(v[i]) + eps);
          const double r_t = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
          p[i] -= lr * m_hat * r_t * l_t;
        }
      }
    }
    return p;
  }
};

inline void expect_vec_near(const Vec& got, const Vec& want, double tol, const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " element " << i;
}

}  // namespace tessera::test
