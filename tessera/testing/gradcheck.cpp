#include "tessera/testing/gradcheck.h"

#include <cmath>
#include <cstring>
#include <random>

#include "tessera/api/transforms.h"
#include "tessera/ops/ops.h"

namespace tessera::testing {

namespace {

// The scalar that is differentiated: the output projected onto fixed random weights, so that every
// output element contributes with a distinct factor.
double projected(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Array>& inputs,
                 const Array& weights) {
  std::vector<Tensor> args;
  for (const Array& a : inputs) args.push_back(Tensor::from_array(a));
  const Tensor out = fn(args);
  const std::vector<double> y = out.array().to_f64();
  const std::vector<double> w = weights.to_f64();
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * w[i];
  return s;
}

}  // namespace

GradCheckResult check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                const std::vector<Array>& inputs, const GradCheckOptions& options) {
  GradCheckResult result;
  std::vector<Tensor> args;
  for (const Array& a : inputs) args.push_back(Tensor::from_array(a));
  const Tensor out = fn(args);
  TESSERA_CHECK(is_floating(out.dtype()), "check_gradients: the function returns {}, expected a floating tensor",
                dtype_name(out.dtype()));

  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  std::vector<double> wv(static_cast<size_t>(out.numel()));
  for (double& w : wv) w = dist(rng) * ((rng() & 1) ? 1.0 : -1.0);
  const Array weights = Array::from_vector(wv, out.shape());

  std::vector<size_t> wrt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (is_floating(inputs[i].dtype())) wrt.push_back(i);
  }
  auto loss_fn = [&](const std::vector<Tensor>& xs) {
    return ops::sum(ops::mul(ops::cast(fn(xs), DType::f64), Tensor::from_array(weights)));
  };
  const std::vector<Tensor> grads = grad(loss_fn, wrt)(args);

  int reported = 0;
  for (size_t k = 0; k < wrt.size(); ++k) {
    const size_t i = wrt[k];
    const std::vector<double> analytic = grads[k].array().to_f64();
    const Array base = inputs[i].astype(DType::f64);
    for (int64_t e = 0; e < base.numel(); ++e) {
      std::vector<Array> plus = inputs, minus = inputs;
      Array p = base.copy(), m = base.copy();
      p.data<double>()[e] += options.eps;
      m.data<double>()[e] -= options.eps;
      plus[i] = p.astype(inputs[i].dtype());
      minus[i] = m.astype(inputs[i].dtype());
      const double numeric = (projected(fn, plus, weights) - projected(fn, minus, weights)) / (2 * options.eps);
      const double err = std::abs(analytic[static_cast<size_t>(e)] - numeric);
      const bool bad = !(err <= options.atol + options.rtol * std::abs(numeric));  // NaN counts as bad
      result.max_abs_error = std::max(result.max_abs_error, std::isnan(err) ? INFINITY : err);
      if (bad) {
        result.ok = false;
        if (reported++ < 5) {
          result.message += fmt::format("input {} element {}: analytic {:.10g} vs numeric {:.10g} (|diff| {:.3g})\n",
                                        i, e, analytic[static_cast<size_t>(e)], numeric, err);
        }
      }
    }
  }
  return result;
}

}  // namespace tessera::testing
