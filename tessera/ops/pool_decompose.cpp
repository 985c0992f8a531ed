// The sliding pools as window taps (conv_unfold) and reductions, matching conv_pool.cpp's kernels:
//   max_pool          max over the taps, those outside the input read the dtype's lowest value
//   max_pool_grad     g routed to the first maximum of each window in row-major tap order: a tap is
//                     chosen when it equals the window's max (or both are NaN: NaN wins, as in max),
//                     lies inside the input, and has the smallest tap number among such taps
//   max_pool_gather   v read at that same tap
//   avg_pool(_grad)   sum of the taps times PyTorch's per-axis divisors, and its transpose
// The window count per axis is tessera::sliding_window_count, so ceil mode's partial last window is
// simply a window whose trailing taps fall outside the input.
#include <cmath>

#include "tessera/core/window.h"
#include "tessera/ops/conv_decompose.h"
#include "tessera/ops/conv_unfold.h"
#include "tessera/ops/ops.h"

namespace tessera::ops::conv_detail {

namespace {

std::vector<AxisWindow> pool_windows_of(const ir::Attrs& a, const Shape& in) {
  const Shape& kernel = a.get_ints("kernel");
  const bool ceil_mode = a.get_bool_or("ceil_mode", false);
  std::vector<AxisWindow> w;
  for (size_t i = 0; i < kernel.size(); ++i) {
    AxisWindow axis;
    axis.size = in[in.size() - kernel.size() + i];
    axis.kernel = kernel[i];
    axis.stride = a.get_ints("stride")[i];
    axis.padding = a.get_ints("padding")[i];
    axis.dilation = a.has("dilation") ? a.get_ints("dilation")[i] : 1;
    axis.out = sliding_window_count(axis.size, axis.kernel, axis.stride, axis.padding, axis.dilation, ceil_mode);
    w.push_back(axis);
  }
  return w;
}

int64_t lead_of(const Tensor& t, const std::vector<AxisWindow>& w, int64_t per_axis) {
  return t.rank() - per_axis * static_cast<int64_t>(w.size());
}

Shape leading(const Tensor& t, int64_t lead) {
  return Shape(t.shape().begin(), t.shape().begin() + lead);
}

// x [..., *in] -> [..., O1, ..., Or, T], T the window's taps in row-major order.
Tensor window_taps(const Tensor& x, const std::vector<AxisWindow>& w, double fill) {
  const int64_t lead = lead_of(x, w, 1), r = static_cast<int64_t>(w.size());
  std::vector<int64_t> axes;
  Shape shape = leading(x, lead);
  for (int64_t d = 0; d < lead; ++d) axes.push_back(d);
  for (int64_t d = 0; d < r; ++d) axes.push_back(lead + 2 * d + 1);
  for (int64_t d = 0; d < r; ++d) axes.push_back(lead + 2 * d);
  int64_t taps = 1;
  for (const AxisWindow& a : w) {
    shape.push_back(a.out);
    taps *= a.kernel;
  }
  shape.push_back(taps);
  return reshape(permute(unfold_all(x, w, fill), axes), shape);
}

// The adjoint of window_taps: [..., O1, ..., Or, T] summed onto [..., *in].
Tensor scatter_taps(const Tensor& t, const std::vector<AxisWindow>& w, bool masked) {
  const int64_t r = static_cast<int64_t>(w.size()), lead = t.rank() - r - 1;
  Shape split = leading(t, lead);
  for (const AxisWindow& a : w) split.push_back(a.out);
  for (const AxisWindow& a : w) split.push_back(a.kernel);
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < lead; ++d) axes.push_back(d);
  for (int64_t d = 0; d < r; ++d) {
    axes.push_back(lead + r + d);
    axes.push_back(lead + d);
  }
  return fold_all(permute(reshape(t, split), axes), w, masked);
}

// Calls f(o, k) for every output position and tap, both as per-axis indices in row-major order.
template <class F>
void for_each_window_tap(const std::vector<AxisWindow>& w, F&& f) {
  const size_t r = w.size();
  std::vector<int64_t> o(r, 0), k(r, 0);
  auto next = [&](std::vector<int64_t>& idx, auto extent) {
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < extent(d)) return true;
      idx[d] = 0;
    }
    return false;
  };
  do {
    do {
      f(o, k);
    } while (next(k, [&](size_t d) { return w[d].kernel; }));
  } while (next(o, [&](size_t d) { return w[d].out; }));
}

// [O1, ..., Or, T]: whether the tap lies inside the input on every axis.
Tensor taps_inside(const std::vector<AxisWindow>& w) {
  std::vector<uint8_t> inside;
  bool all = true;
  for_each_window_tap(w, [&](const std::vector<int64_t>& o, const std::vector<int64_t>& k) {
    bool in = true;
    for (size_t d = 0; d < w.size(); ++d) in = in && w[d].inside(k[d], o[d]);
    inside.push_back(in ? 1 : 0);
    all = all && in;
  });
  if (all) return Tensor();
  Shape shape;
  int64_t taps = 1;
  for (const AxisWindow& a : w) {
    shape.push_back(a.out);
    taps *= a.kernel;
  }
  shape.push_back(taps);
  return Tensor::from_array(Array::from_vector(inside, shape).astype(DType::boolean));
}

// bool [..., O..., T]: true at the tap max_pool_grad routes each window's gradient to.
Tensor first_max(const Tensor& x, const std::vector<AxisWindow>& w) {
  const Tensor taps = window_taps(x, w, lowest_of(x.dtype()));
  const int64_t last = taps.rank() - 1, count = taps.shape().back();
  const Tensor y = max(taps, {last}, true);
  Tensor hit = eq(taps, y);
  if (is_floating(x.dtype())) hit = logical_or(hit, logical_and(isnan(taps), isnan(y)));
  if (const Tensor inside = taps_inside(w); inside.defined()) hit = logical_and(hit, inside);
  std::vector<int32_t> order(static_cast<size_t>(count));
  for (size_t t = 0; t < order.size(); ++t) order[t] = static_cast<int32_t>(t);
  const Tensor tap = Tensor::from_array(Array::from_vector(order, {count}));
  const Tensor first = min(where(hit, tap, full({}, static_cast<double>(count), DType::i32)), {last}, true);
  return eq(tap, first);
}

// [O1, ..., Or]: the weight of every tap of each window, the product of PyTorch's per-axis divisors'
// reciprocals (as conv_pool.cpp's pool_windows).
Tensor avg_weights(const std::vector<AxisWindow>& w, bool count_include_pad, DType dtype) {
  std::vector<std::vector<double>> axis(w.size());
  for (size_t d = 0; d < w.size(); ++d) {
    const AxisWindow& a = w[d];
    for (int64_t o = 0; o < a.out; ++o) {
      const int64_t start = a.position(0, o);
      int64_t divisor = std::min(start + a.kernel, a.size + a.padding) - start;
      if (!count_include_pad) {
        divisor = 0;
        for (int64_t k = 0; k < a.kernel; ++k) divisor += a.inside(k, o) ? 1 : 0;
      }
      axis[d].push_back(divisor > 0 ? 1.0 / static_cast<double>(divisor) : 0.0);
    }
  }
  std::vector<double> weights;
  Shape shape;
  for (const AxisWindow& a : w) shape.push_back(a.out);
  std::vector<int64_t> o(w.size(), 0);
  for (int64_t i = 0; i < shape_numel(shape); ++i) {
    double v = 1.0;
    for (size_t d = 0; d < w.size(); ++d) v *= axis[d][static_cast<size_t>(o[d])];
    weights.push_back(v);
    for (size_t d = w.size(); d-- > 0;) {
      if (++o[d] < shape[d]) break;
      o[d] = 0;
    }
  }
  return Tensor::from_array(Array::from_vector(weights, shape).astype(dtype));
}

// The kernel axes of unfold_all's [..., K1, O1, ..., Kr, Or].
Axes kernel_axes(int64_t lead, size_t r) {
  Axes axes;
  for (size_t d = 0; d < r; ++d) axes.push_back(lead + 2 * static_cast<int64_t>(d));
  return axes;
}

}  // namespace

std::vector<ir::Value> max_pool_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]);
  const std::vector<AxisWindow> w = pool_windows_of(a, x.shape());
  return {max(unfold_all(x, w, lowest_of(x.dtype())), kernel_axes(lead_of(x, w, 1), w.size()))};
}

std::vector<ir::Value> max_pool_grad_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]), g(in[1]);
  const std::vector<AxisWindow> w = pool_windows_of(a, x.shape());
  const Tensor routed = where(first_max(x, w), unsqueeze(g, g.rank()), zeros({}, g.dtype()));
  return {scatter_taps(routed, w, /*masked=*/false)};  // taps outside the input were never chosen
}

std::vector<ir::Value> max_pool_gather_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]), v(in[1]);
  const std::vector<AxisWindow> w = pool_windows_of(a, x.shape());
  const double lowest = lowest_of(v.dtype());  // an empty window reads it, as gather_at does
  const Tensor picked = where(first_max(x, w), window_taps(v, w, lowest), full({}, lowest, v.dtype()));
  return {max(picked, {picked.rank() - 1})};
}

std::vector<ir::Value> avg_pool_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]);
  const std::vector<AxisWindow> w = pool_windows_of(a, x.shape());
  const Tensor total = sum(unfold_all(x, w, 0.0), kernel_axes(lead_of(x, w, 1), w.size()));
  return {total * avg_weights(w, a.get_bool("count_include_pad"), x.dtype())};
}

std::vector<ir::Value> avg_pool_grad_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor g(in[0]);
  const std::vector<AxisWindow> w = pool_windows_of(a, a.get_ints("input_size"));
  const Tensor weighted = g * avg_weights(w, a.get_bool("count_include_pad"), g.dtype());
  const int64_t lead = lead_of(g, w, 1);
  Shape spread = leading(g, lead), taps = leading(g, lead);
  for (const AxisWindow& axis : w) {
    spread.insert(spread.end(), {1, axis.out});
    taps.insert(taps.end(), {axis.kernel, axis.out});
  }
  return {fold_all(broadcast_to(reshape(weighted, spread), taps), w)};
}

}  // namespace tessera::ops::conv_detail
