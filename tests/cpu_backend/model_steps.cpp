#include "model_steps.h"

#include <cmath>

#include "op_samples.h"
#include "tessera/ops/optim.h"

namespace tessera::test {
namespace {

using ParamList = std::vector<ir::TensorType>;

// Adam with betas (0.9, 0.999), eps 1e-8: the fused op, or the same step spelled with elementwise ops.
std::vector<Tensor> adam(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor& lr,
                         const Tensor& step, bool fused) {
  if (fused) return ops::adam_update(p, g, m, v, lr, step);
  const ir::OpDef& op = ir::OpRegistry::instance().get("adam_update");
  const ir::Attrs attrs{{"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0.0}, {"decoupled", false}};
  const std::vector<ir::Value> out = op.decompose({p, g, m, v, lr, step}, attrs);
  return {out[0], out[1], out[2]};
}

// Traces a step for a model given as loss(x, y, params).
StepGraph train_step(const ir::TensorType& x_type, int64_t batch, int64_t classes, const ParamList& params,
                     bool fused_adam,
                     std::function<Tensor(const Tensor&, const Tensor&, const std::vector<Tensor>&)> loss) {
  std::vector<ir::TensorType> types = {x_type, {DType::i64, {batch}}};
  for (const ir::TensorType& p : params) {
    for (int k = 0; k < 3; ++k) types.push_back(p);
  }
  types.push_back({DType::f64, {}});
  types.push_back({DType::f64, {}});
  const size_t n = params.size();
  MultiFn fn = [n, loss, fused_adam](const std::vector<Tensor>& a) -> std::vector<Tensor> {
    std::vector<Tensor> ps;
    for (size_t i = 0; i < n; ++i) ps.push_back(a[2 + 3 * i]);
    ScalarFn objective = [&](const std::vector<Tensor>& q) { return loss(a[0], a[1], q); };
    std::vector<Tensor> vg = value_and_grad(objective)(ps);
    std::vector<Tensor> out = {vg[0]};
    for (size_t i = 0; i < n; ++i) {
      for (const Tensor& t :
           adam(ps[i], vg[1 + i], a[3 + 3 * i], a[4 + 3 * i], a[2 + 3 * n], a[3 + 3 * n], fused_adam)) {
        out.push_back(t);
      }
    }
    return out;
  };
  StepGraph s;
  s.graph = trace(fn, types);
  s.inputs.push_back(sample_array(x_type, 11, 0, 1));
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  for (size_t i = 0; i < labels.size(); ++i)
    labels[i] = static_cast<int64_t>((i * 7 + 3) % static_cast<size_t>(classes));
  s.inputs.push_back(Array::from_vector(labels, {batch}));
  for (size_t i = 0; i < n; ++i) {
    const ir::TensorType& p = params[i];
    const int64_t fan_in = p.rank() > 1 ? p.numel() / p.shape[0] : 16;
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    s.inputs.push_back(sample_array(p, 100 + i, -bound, bound));
    s.inputs.push_back(sample_array(p, 200 + i, -0.01, 0.01));
    s.inputs.push_back(sample_array(p, 300 + i, 0.0, 1e-4));
  }
  s.inputs.push_back(Array::scalar(1e-3, DType::f64));
  s.inputs.push_back(Array::scalar(3, DType::f64));  // a later step, so the moments matter
  return s;
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  return ops::matmul(x, ops::transpose(w)) + b;
}

}  // namespace

StepGraph mlp_train_step(int64_t batch, const std::vector<int64_t>& widths, bool fused_adam) {
  ParamList params;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    params.push_back({DType::f32, {widths[i + 1], widths[i]}});
    params.push_back({DType::f32, {widths[i + 1]}});
  }
  return train_step({DType::f32, {batch, widths.front()}}, batch, widths.back(), params, fused_adam,
                    [](const Tensor& x, const Tensor& y, const std::vector<Tensor>& p) {
                      Tensor h = x;
                      for (size_t i = 0; i < p.size(); i += 2) {
                        h = linear(h, p[i], p[i + 1]);
                        if (i + 2 < p.size()) h = ops::relu(h);
                      }
                      return ops::cross_entropy(h, y);
                    });
}

StepGraph cnn_train_step(int64_t batch, bool fused_adam) {
  const ParamList params = {{DType::f32, {32, 1, 3, 3}}, {DType::f32, {32}},        {DType::f32, {64, 32, 3, 3}},
                            {DType::f32, {64}},          {DType::f32, {128, 1600}}, {DType::f32, {128}},
                            {DType::f32, {10, 128}},     {DType::f32, {10}}};
  return train_step({DType::f32, {batch, 1, 28, 28}}, batch, 10, params, fused_adam,
                    [](const Tensor& x, const Tensor& y, const std::vector<Tensor>& p) {
                      Tensor h = ops::max_pool2d(ops::relu(ops::conv2d(x, p[0], p[1])), {2, 2});
                      h = ops::max_pool2d(ops::relu(ops::conv2d(h, p[2], p[3])), {2, 2});
                      h = ops::flatten(h, 1);
                      h = ops::relu(linear(h, p[4], p[5]));
                      return ops::cross_entropy(linear(h, p[6], p[7]), y);
                    });
}

}  // namespace tessera::test
