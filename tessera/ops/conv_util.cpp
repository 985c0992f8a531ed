// Shared helpers of the convolution, pooling and resampling ops: attribute checks, window geometry and
// the window-operator reference kernels (see conv_util.h).
#include "tessera/ops/conv_util.h"

#include <algorithm>

namespace tessera::ops::conv_detail {

std::vector<int64_t> spatial_attr(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs,
                                  const std::string& name, int64_t spatial_rank, int64_t min_value) {
  const std::vector<int64_t>& v = attrs.get_ints(name);
  if (static_cast<int64_t>(v.size()) != spatial_rank) {
    ir::op_fail(op, in, "{} {} has {} entries, expected one per spatial axis ({})", name, shape_str(v), v.size(),
                spatial_rank);
  }
  for (int64_t e : v) {
    if (e < min_value) {
      ir::op_fail(op, in, "{} must be {}, got {}", name, min_value > 0 ? "positive" : "non-negative", shape_str(v));
    }
  }
  return v;
}

int64_t window_out_size(const std::string& op, const std::vector<TensorType>& in, int64_t axis, int64_t size,
                        int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  if (kernel < 1) ir::op_fail(op, in, "kernel size {} along spatial axis {} must be positive", kernel, axis);
  const int64_t effective = dilation * (kernel - 1) + 1;
  if (effective > size + 2 * padding) {
    ir::op_fail(op, in,
                "kernel size {} (dilated to {}) is larger than the padded input size {} (= {} + 2 x padding {}) "
                "along spatial axis {}",
                kernel, effective, size + 2 * padding, size, padding, axis);
  }
  return (size + 2 * padding - effective) / stride + 1;
}

void require_floating(const std::string& op, const std::vector<TensorType>& in, size_t index, const char* role) {
  if (!is_floating(in[index].dtype)) {
    ir::op_fail(op, in, "{} must have a floating dtype (f32, f64, f16, bf16), got {}", role,
                dtype_name(in[index].dtype));
  }
}

void require_same_dtype(const std::string& op, const std::vector<TensorType>& in, size_t a, size_t b) {
  if (in[a].dtype != in[b].dtype) {
    ir::op_fail(op, in, "inputs {} and {} must have the same dtype, got {} and {}", a, b, dtype_name(in[a].dtype),
                dtype_name(in[b].dtype));
  }
}

Shape spatial_dims(const Shape& shape, int64_t spatial_rank) {
  return Shape(shape.end() - spatial_rank, shape.end());
}

Shape leading_dims(const Shape& shape, int64_t spatial_rank) {
  return Shape(shape.begin(), shape.end() - spatial_rank);
}

Shape concat_shapes(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

Array packed_compute(const Array& a) {
  const bool half = a.dtype() == DType::f16 || a.dtype() == DType::bf16;
  return (half ? a.astype(DType::f32) : a).contiguous();
}

namespace {
// Unravels flat index `flat` of `shape` (row-major) into `idx`.
void unravel(int64_t flat, const Shape& shape, std::vector<int64_t>& idx) {
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
}
}  // namespace

TapRuns tap_runs(const SlidingWindow& w) {
  const size_t last = w.in.size() - 1;
  const int64_t taps = shape_numel(w.kernel);
  const Strides in_strides = contiguous_strides(w.in), out_strides = contiguous_strides(w.out);
  const Shape rows(w.out.begin(), w.out.end() - 1);  // output positions of every axis but the last
  const int64_t n_rows = shape_numel(rows);
  TapRuns r;
  r.start.push_back(0);
  std::vector<int64_t> k_idx(w.kernel.size()), row_idx(rows.size());
  for (int64_t k = 0; k < taps; ++k) {
    unravel(k, w.kernel, k_idx);
    // Valid outputs along the last axis: 0 <= o * s - p + k * d < in.
    const int64_t s = w.stride[last], shift = k_idx[last] * w.dilation[last] - w.padding[last];
    const int64_t lo = shift >= 0 ? 0 : (-shift + s - 1) / s;
    const int64_t hi_reach = w.in[last] - 1 - shift;  // o * s <= hi_reach
    const int64_t hi = hi_reach < 0 ? -1 : std::min(hi_reach / s, w.out[last] - 1);
    for (int64_t row = 0; row < n_rows && hi >= lo; ++row) {
      unravel(row, rows, row_idx);
      int64_t in_base = 0, out_base = 0;
      bool inside = true;
      for (size_t d = 0; d < last && inside; ++d) {
        const int64_t pos = row_idx[d] * w.stride[d] - w.padding[d] + k_idx[d] * w.dilation[d];
        inside = pos >= 0 && pos < w.in[d];
        in_base += pos * in_strides[d];
        out_base += row_idx[d] * out_strides[d];
      }
      if (!inside) continue;
      r.runs.push_back({out_base + lo, in_base + lo * s + shift, s, hi - lo + 1});
    }
    r.start.push_back(static_cast<int64_t>(r.runs.size()));
  }
  return r;
}

AxisTaps sliding_axis_taps(int64_t size, int64_t kernel, int64_t out, int64_t stride, int64_t padding,
                           int64_t dilation) {
  AxisTaps taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t pos = o * stride - padding + k * dilation;
      if (pos >= 0 && pos < size) taps[static_cast<size_t>(o)].push_back({pos, 1.0});
    }
  }
  return taps;
}

Windows combine_axis_taps(const std::vector<AxisTaps>& axes, const Shape& in, const Shape& out) {
  const size_t rank = axes.size();
  const Strides in_strides = contiguous_strides(in);
  Windows w;
  w.in_size = shape_numel(in);
  w.out_size = shape_numel(out);
  w.start.reserve(static_cast<size_t>(w.out_size) + 1);
  w.start.push_back(0);
  std::vector<int64_t> o_idx(rank, 0);
  std::vector<const std::vector<std::pair<int64_t, double>>*> lists(rank);
  std::vector<size_t> pick(rank);
  for (int64_t o = 0; o < w.out_size; ++o) {
    unravel(o, out, o_idx);
    bool empty = false;
    for (size_t d = 0; d < rank; ++d) {
      lists[d] = &axes[d][static_cast<size_t>(o_idx[d])];
      empty = empty || lists[d]->empty();
    }
    // Odometer over one tap per axis, the last axis fastest.
    std::fill(pick.begin(), pick.end(), 0);
    while (!empty) {
      int64_t flat = 0;
      double weight = 1.0;
      for (size_t d = 0; d < rank; ++d) {
        flat += (*lists[d])[pick[d]].first * in_strides[d];
        weight *= (*lists[d])[pick[d]].second;
      }
      w.index.push_back(flat);
      w.weight.push_back(weight);
      size_t d = rank;
      while (d-- > 0) {
        if (++pick[d] < lists[d]->size()) break;
        pick[d] = 0;
      }
      if (d == static_cast<size_t>(-1)) break;
    }
    w.start.push_back(static_cast<int64_t>(w.index.size()));
  }
  return w;
}

Array apply_windows(const Array& x, const Windows& w, const Shape& out_shape) {
  return with_compute_type(x.dtype(), "window op", [&](auto tag) -> Array {
    using C = decltype(tag);
    const Array xp = packed_compute(x);
    const C* src = xp.data<const C>();
    Array out = Array::empty(dtype_of<C>(), out_shape);
    C* dst = out.data<C>();
    const int64_t batch = w.in_size == 0 ? 0 : xp.numel() / w.in_size;
    for (int64_t b = 0; b < batch; ++b) {
      const C* xb = src + b * w.in_size;
      C* ob = dst + b * w.out_size;
      for (int64_t o = 0; o < w.out_size; ++o) {
        double acc = 0.0;
        for (int64_t j = w.start[static_cast<size_t>(o)]; j < w.start[static_cast<size_t>(o) + 1]; ++j) {
          acc += w.weight[static_cast<size_t>(j)] * static_cast<double>(xb[w.index[static_cast<size_t>(j)]]);
        }
        ob[o] = static_cast<C>(acc);
      }
    }
    if (w.in_size == 0) std::fill(dst, dst + out.numel(), C(0));
    return out;
  });
}

Array apply_windows_transposed(const Array& g, const Windows& w, const Shape& in_shape) {
  return with_compute_type(g.dtype(), "window op gradient", [&](auto tag) -> Array {
    using C = decltype(tag);
    const Array gp = packed_compute(g);
    const C* src = gp.data<const C>();
    Array out = Array::empty(dtype_of<C>(), in_shape);
    C* dst = out.data<C>();
    const int64_t batch = w.out_size == 0 ? 0 : gp.numel() / w.out_size;
    std::vector<double> acc(static_cast<size_t>(w.in_size));
    std::fill(dst, dst + out.numel(), C(0));
    for (int64_t b = 0; b < batch; ++b) {
      const C* gb = src + b * w.out_size;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t o = 0; o < w.out_size; ++o) {
        const double go = static_cast<double>(gb[o]);
        for (int64_t j = w.start[static_cast<size_t>(o)]; j < w.start[static_cast<size_t>(o) + 1]; ++j) {
          acc[static_cast<size_t>(w.index[static_cast<size_t>(j)])] += w.weight[static_cast<size_t>(j)] * go;
        }
      }
      C* db = dst + b * w.in_size;
      for (int64_t i = 0; i < w.in_size; ++i) db[i] = static_cast<C>(acc[static_cast<size_t>(i)]);
    }
    return out;
  });
}

Array gather_windows(const Array& x, const Windows& w, const Shape& out_shape) {
  return dispatch_dtype(x.dtype(), [&](auto tag) -> Array {
    using T = decltype(tag);
    const Array xp = x.contiguous();
    const T* src = xp.data<const T>();
    Array out = Array::empty(dtype_of<T>(), out_shape);
    T* dst = out.data<T>();
    const int64_t batch = w.in_size == 0 ? 0 : xp.numel() / w.in_size;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t o = 0; o < w.out_size; ++o) {
        dst[b * w.out_size + o] = src[b * w.in_size + w.index[static_cast<size_t>(w.start[static_cast<size_t>(o)])]];
      }
    }
    return out;
  });
}

}  // namespace tessera::ops::conv_detail
