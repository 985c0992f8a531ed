// adam_update: the whole Adam/AdamW step of one parameter as a single op. The reference computes it
// in f64 per element; the decomposition spells the same step with elementwise ops for backends and
// exporters without a fused kernel.
#include <cmath>

#include "tessera/core/strided.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/optim.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;

std::vector<TensorType> infer_adam(const std::vector<TensorType>& in, const Attrs& a) {
  const TensorType& p = in[0];
  if (!is_floating(p.dtype)) ir::op_fail("adam_update", in, "the parameter must be floating point");
  for (size_t i = 1; i < 4; ++i) {
    if (in[i] != p) {
      ir::op_fail("adam_update", in, "gradient and state must have the parameter's type {} (input {} is {})",
                  ir::type_str(p), i, ir::type_str(in[i]));
    }
  }
  for (size_t i = 4; i < 6; ++i) {
    if (in[i].dtype != DType::f64 || in[i].rank() != 0) {
      ir::op_fail("adam_update", in, "{} must be an f64 scalar, got {}", i == 4 ? "lr" : "step", ir::type_str(in[i]));
    }
  }
  for (const char* beta : {"beta1", "beta2"}) {
    const double b = a.get_float(beta);
    if (!(b >= 0.0 && b < 1.0)) ir::op_fail("adam_update", in, "{} must be in [0, 1), got {}", beta, b);
  }
  return {p, p, p};
}

// Per-element step; b = bias-correction terms computed once per call.
struct AdamScalars {
  double lr, beta1, beta2, eps, wd, inv_sqrt_bc2, step_size;
  bool decoupled;
};

AdamScalars scalars_of(const Attrs& a, double lr, double step) {
  AdamScalars s{};
  s.lr = lr;
  s.beta1 = a.get_float("beta1");
  s.beta2 = a.get_float("beta2");
  s.eps = a.get_float("eps");
  s.wd = a.get_float("weight_decay");
  s.decoupled = a.get_bool("decoupled");
  s.inv_sqrt_bc2 = 1.0 / std::sqrt(1.0 - std::pow(s.beta2, step));
  s.step_size = lr / (1.0 - std::pow(s.beta1, step));
  return s;
}

std::vector<Array> adam_reference(const std::vector<Array>& in, const Attrs& a, const std::vector<TensorType>&) {
  const AdamScalars s = scalars_of(a, in[4].item(), in[5].item());
  const Shape& shape = in[0].shape();
  std::vector<Array> out{Array::empty(in[0].dtype(), shape), Array::empty(in[0].dtype(), shape),
                         Array::empty(in[0].dtype(), shape)};
  dispatch_floating(in[0].dtype(), "adam_update", [&](auto tag) {
    using T = decltype(tag);
    std::vector<Array> src;
    for (size_t i = 0; i < 4; ++i) src.push_back(in[i].contiguous());
    const T *p = src[0].data<const T>(), *g = src[1].data<const T>(), *m = src[2].data<const T>(),
            *v = src[3].data<const T>();
    T *po = out[0].data<T>(), *mo = out[1].data<T>(), *vo = out[2].data<T>();
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      const double pi = static_cast<double>(p[i]);
      double gi = static_cast<double>(g[i]);
      if (!s.decoupled) gi += s.wd * pi;
      const double mi = s.beta1 * static_cast<double>(m[i]) + (1.0 - s.beta1) * gi;
      const double vi = s.beta2 * static_cast<double>(v[i]) + (1.0 - s.beta2) * gi * gi;
      const double base = s.decoupled ? pi * (1.0 - s.lr * s.wd) : pi;
      po[i] = convert_element<T>(base - mi / (std::sqrt(vi) * s.inv_sqrt_bc2 + s.eps) * s.step_size);
      mo[i] = convert_element<T>(mi);
      vo[i] = convert_element<T>(vi);
    }
  });
  return out;
}

std::vector<Value> adam_decompose(const std::vector<Value>& in, const Attrs& a) {
  const Tensor p(in[0]), lr(in[4]), t(in[5]);
  const double beta1 = a.get_float("beta1"), beta2 = a.get_float("beta2"), eps = a.get_float("eps");
  const double wd = a.get_float("weight_decay");
  const bool decoupled = a.get_bool("decoupled");
  const Tensor g = !decoupled && wd != 0.0 ? Tensor(in[1]) + p * wd : Tensor(in[1]);
  const Tensor m = Tensor(in[2]) * beta1 + g * (1.0 - beta1);
  const Tensor v = Tensor(in[3]) * beta2 + square(g) * (1.0 - beta2);
  const Tensor bc1 = 1.0 - pow(Tensor::scalar(beta1, DType::f64), t);
  const Tensor bc2 = 1.0 - pow(Tensor::scalar(beta2, DType::f64), t);
  const Tensor base = decoupled && wd != 0.0 ? p * cast(1.0 - lr * wd, p.dtype()) : p;
  const Tensor denom = sqrt(v) * cast(rsqrt(bc2), p.dtype()) + eps;
  const Tensor new_p = base - m / denom * cast(lr / bc1, p.dtype());
  return {new_p.value(), m.value(), v.value()};
}

}  // namespace

std::vector<Tensor> adam_update(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                                const Tensor& exp_avg_sq, const Tensor& lr, const Tensor& step,
                                const AdamUpdateOptions& o) {
  const std::vector<Value> outs = ir::make_node("adam_update", {param, grad, exp_avg, exp_avg_sq, lr, step},
                                                Attrs{{"beta1", o.beta1},
                                                      {"beta2", o.beta2},
                                                      {"eps", o.eps},
                                                      {"weight_decay", o.weight_decay},
                                                      {"decoupled", o.decoupled}});
  return std::vector<Tensor>(outs.begin(), outs.end());
}

void register_optim_ops(ir::OpRegistry& registry) {
  registry.add(ir::OpDef{
      .name = "adam_update",
      .min_inputs = 6,
      .max_inputs = 6,
      .attrs = {{"beta1", ir::AttrKind::Float},
                {"beta2", ir::AttrKind::Float},
                {"eps", ir::AttrKind::Float},
                {"weight_decay", ir::AttrKind::Float},
                {"decoupled", ir::AttrKind::Bool}},
      .traits = 0,
      .infer = infer_adam,
      .reference = adam_reference,
      .decompose = adam_decompose,
  });
}

}  // namespace tessera::ops
