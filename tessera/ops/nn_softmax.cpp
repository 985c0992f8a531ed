// softmax and log_softmax along one axis, as ops of their own (not composites) so that compiler
// passes can find them: log(softmax(x)) -> log_softmax, softmax + NLL -> cross entropy. Each also
// carries a `decompose` into max/exp/sum/div/log for backends without a dedicated kernel.
#include <cmath>
#include <limits>

#include "tessera/core/strided.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

// A rank-0 tensor is one lane of length 1 (PyTorch accepts axis 0 or -1 there).
int64_t lane_axis(const std::string& op, const std::vector<TensorType>& in, int64_t axis) {
  const int64_t rank = std::max<int64_t>(in[0].rank(), 1);
  if (axis < -rank || axis >= rank) {
    ir::op_fail(op, in, "axis {} is out of range for rank {}", axis, in[0].rank());
  }
  return axis < 0 ? axis + rank : axis;
}

// Reduction axes for the lane sums in the gradient rules: {} (all, i.e. none) for rank 0.
Axes lane_axes(const Value& x, int64_t axis) {
  if (x.rank() == 0) return {};
  return {normalize_axis(axis, x.rank(), "softmax")};
}

// Applies `lane(values, n)` to every 1-D lane of `x` along `axis`, in double; the function rewrites
// the lane's values in place and they are stored into a fresh contiguous result of x's dtype.
template <class LaneFn>
Array map_lanes(const Array& input, int64_t axis, LaneFn lane) {
  const Array x = input.rank() == 0 ? input.reshape({1}) : input;
  Array out = Array::empty(x.dtype(), x.shape());
  dispatch_floating(x.dtype(), "softmax", [&](auto tag) {
    using T = decltype(tag);
    const Strides out_strides = contiguous_strides(x.shape());
    Shape outer = x.shape();
    const auto a = static_cast<size_t>(axis);
    outer[a] = 1;
    const int64_t n = x.shape()[a], in_step = x.strides()[a], out_step = out_strides[a];
    const T* src = x.data<const T>();
    T* dst = out.data<T>();
    std::vector<double> buf(static_cast<size_t>(n));
    for_each_offset<2>(outer, {&x.strides(), &out_strides}, {0, 0}, [&](const std::array<int64_t, 2>& off) {
      for (int64_t i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = static_cast<double>(src[off[0] + i * in_step]);
      lane(buf);
      for (int64_t i = 0; i < n; ++i) dst[off[1] + i * out_step] = convert_element<T>(buf[static_cast<size_t>(i)]);
    });
  });
  return input.rank() == 0 ? out.reshape({}) : out;
}

// The lane maximum, ignoring NaN (NaN then propagates through exp and the sum).
double lane_max(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double e : v) {
    if (e > m) m = e;
  }
  return m;
}

void softmax_lane(std::vector<double>& v) {
  const double m = lane_max(v);
  double s = 0;
  for (double& e : v) {
    e = std::exp(e - m);
    s += e;
  }
  for (double& e : v) e /= s;
}

void log_softmax_lane(std::vector<double>& v) {
  const double m = lane_max(v);
  double s = 0;
  for (double e : v) s += std::exp(e - m);
  const double log_s = std::log(s);
  for (double& e : v) e = e - m - log_s;
}

template <void (*Lane)(std::vector<double>&)>
ir::OpDef lane_op(const std::string& name, ir::VjpFn vjp, ir::DecomposeFn decompose) {
  return ir::OpDef{
      .name = name,
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"axis", ir::AttrKind::Int}},
      .traits = ir::kFusable,
      .infer = [name](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        if (!is_floating(in[0].dtype)) {
          ir::op_fail(name, in, "expected a floating dtype (f32, f64, f16, bf16); cast integers first");
        }
        lane_axis(name, in, a.get_int("axis"));
        return {in[0]};
      },
      .reference = [name](const std::vector<Array>& in, const Attrs& a,
                          const std::vector<TensorType>&) -> std::vector<Array> {
        const int64_t axis = lane_axis(name, {{in[0].dtype(), in[0].shape()}}, a.get_int("axis"));
        return {map_lanes(in[0], axis, Lane)};
      },
      .vjp = std::move(vjp),
      .decompose = std::move(decompose),
  };
}

// The max that shifts the exponent, with its gradient blocked: the shift cancels mathematically.
Tensor lane_shift(const Tensor& x, const Axes& axes) {
  return stop_gradient(max(x, axes, true));
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) {
  return ir::make_node1("softmax", {x}, Attrs{{"axis", axis}});
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  return ir::make_node1("log_softmax", {x}, Attrs{{"axis", axis}});
}

void register_nn_softmax_ops(ir::OpRegistry& r) {
  r.add(lane_op<softmax_lane>(
      "softmax",
      [](const VjpContext& c) -> std::vector<Value> {
        // dx = y * (g - sum(g * y)) over the lane.
        const Tensor y(c.output()), g(c.cotangent());
        const Axes axes = lane_axes(c.input(0), c.attrs().get_int("axis"));
        return {y * (g - sum(g * y, axes, true))};
      },
      [](const std::vector<Value>& in, const Attrs& a) -> std::vector<Value> {
        const Tensor x(in[0]);
        const Axes axes = lane_axes(in[0], a.get_int("axis"));
        const Tensor e = exp(x - lane_shift(x, axes));
        return {e / sum(e, axes, true)};
      }));
  r.add(lane_op<log_softmax_lane>(
      "log_softmax",
      [](const VjpContext& c) -> std::vector<Value> {
        // dx = g - softmax(x) * sum(g) over the lane, with softmax(x) = exp(y).
        const Tensor y(c.output()), g(c.cotangent());
        const Axes axes = lane_axes(c.input(0), c.attrs().get_int("axis"));
        return {g - exp(y) * sum(g, axes, true)};
      },
      [](const std::vector<Value>& in, const Attrs& a) -> std::vector<Value> {
        const Tensor x(in[0]);
        const Axes axes = lane_axes(in[0], a.get_int("axis"));
        const Tensor shifted = x - lane_shift(x, axes);
        return {shifted - log(sum(exp(shifted), axes, true))};
      }));
}

}  // namespace tessera::ops
