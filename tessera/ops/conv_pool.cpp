// Pooling over the trailing spatial axes (their number is the length of the kernel / output_size
// attribute; every leading axis is a batch axis). The sliding pools take an optional ceil_mode
// (PyTorch's): a last, partial window is kept when it starts inside the input or the left padding.
//   max_pool(x)               max over each window; padding counts as -inf
//   max_pool_grad(x, g)       routes g to each window's argmax in x (the first maximum in scan order)
//   max_pool_gather(x, v)     reads v at each window's argmax in x; the adjoint of max_pool_grad in g
//   avg_pool(x) / avg_pool_grad(g)                    mean over windows, and its transpose
//   adaptive_avg_pool(x) / adaptive_avg_pool_grad(g)  PyTorch's adaptive bins, and the transpose
// The averaging ops are linear window operators (conv_util.h), so each one's VJP is the other.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/core/window.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/conv.h"
#include "tessera/ops/conv_decompose.h"
#include "tessera/ops/conv_util.h"
#include "tessera/ops/ops.h"

namespace tessera::ops::conv_detail {

namespace {
using ir::Value;
using ir::VjpContext;

struct PoolParams {
  int64_t rank = 0;
  Shape kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

void check_pool_rank(const std::string& op, const std::vector<TensorType>& in, size_t index, int64_t rank) {
  if (in[index].rank() < rank + 1) {
    ir::op_fail(op, in, "expected an input of rank >= {} ([..., C, *spatial] with {} spatial axes), got rank {}",
                rank + 1, rank, in[index].rank());
  }
}

// Validated window attributes; `x` is the input whose trailing axes are pooled.
PoolParams pool_params(const std::string& op, const std::vector<TensorType>& in, const Attrs& a, size_t x) {
  PoolParams p;
  p.rank = static_cast<int64_t>(a.get_ints("kernel").size());
  if (p.rank < 1) ir::op_fail(op, in, "kernel must have at least one entry");
  check_pool_rank(op, in, x, p.rank);
  p.kernel = spatial_attr(op, in, a, "kernel", p.rank, 1);
  p.stride = spatial_attr(op, in, a, "stride", p.rank, 1);
  p.padding = spatial_attr(op, in, a, "padding", p.rank, 0);
  p.dilation = a.has("dilation") ? spatial_attr(op, in, a, "dilation", p.rank, 1) : Shape(p.kernel.size(), 1);
  p.ceil_mode = a.get_bool_or("ceil_mode", false);
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    if (2 * p.padding[i] > p.kernel[i]) {
      ir::op_fail(op, in, "padding {} must be at most half the kernel size {}", shape_str(p.padding),
                  shape_str(p.kernel));
    }
  }
  return p;
}

// Validated-at-construction attributes re-read by kernels and gradient rules.
PoolParams pool_params_unchecked(const Attrs& a) {
  PoolParams p;
  p.kernel = a.get_ints("kernel");
  p.rank = static_cast<int64_t>(p.kernel.size());
  p.stride = a.get_ints("stride");
  p.padding = a.get_ints("padding");
  p.dilation = a.has("dilation") ? a.get_ints("dilation") : Shape(p.kernel.size(), 1);
  p.ceil_mode = a.get_bool_or("ceil_mode", false);
  return p;
}

Shape pooled_spatial(const std::string& op, const std::vector<TensorType>& in, const PoolParams& p,
                     const Shape& spatial) {
  Shape out;
  for (size_t i = 0; i < spatial.size(); ++i) {
    if (!p.ceil_mode) {
      out.push_back(window_out_size(op, in, static_cast<int64_t>(i), spatial[i], p.kernel[i], p.stride[i], p.padding[i],
                                    p.dilation[i]));
      continue;
    }
    const int64_t n =
        sliding_window_count(spatial[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], /*ceil_mode=*/true);
    if (n < 1) {
      ir::op_fail(op, in,
                  "kernel size {} (dilated to {}) leaves no window over the padded input size {} (= {} + 2 x padding "
                  "{}) along spatial axis {}, even in ceil mode",
                  p.kernel[i], p.dilation[i] * (p.kernel[i] - 1) + 1, spatial[i] + 2 * p.padding[i], spatial[i],
                  p.padding[i], i);
    }
    out.push_back(n);
  }
  return out;
}

Shape pooled_spatial_unchecked(const PoolParams& p, const Shape& spatial) {
  Shape out;
  for (size_t i = 0; i < spatial.size(); ++i) {
    out.push_back(sliding_window_count(spatial[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode));
  }
  return out;
}

// Windows of a sliding pool; weights are 1 (max pooling) or the averaging weights.
Windows pool_windows(const PoolParams& p, const Shape& in, bool average, bool count_include_pad) {
  const Shape out = pooled_spatial_unchecked(p, in);
  std::vector<AxisTaps> axes;
  for (size_t i = 0; i < in.size(); ++i) {
    AxisTaps taps = sliding_axis_taps(in[i], p.kernel[i], out[i], p.stride[i], p.padding[i], p.dilation[i]);
    if (average) {
      // PyTorch's divisors: the taps inside the input, or with count_include_pad the window clipped to the
      // padded input (the kernel size, except for a partial last window in ceil mode).
      for (size_t o = 0; o < taps.size(); ++o) {
        const int64_t start = static_cast<int64_t>(o) * p.stride[i] - p.padding[i];
        const int64_t padded_end = std::min(start + p.kernel[i], in[i] + p.padding[i]);
        const double divisor =
            count_include_pad ? static_cast<double>(padded_end - start) : static_cast<double>(taps[o].size());
        for (auto& tap : taps[o]) tap.second = 1.0 / divisor;
      }
    }
    axes.push_back(std::move(taps));
  }
  return combine_axis_taps(axes, in, out);
}

Windows adaptive_windows(const Shape& in, const Shape& out) {
  return combine_axis_taps(adaptive_axis_taps(in, out), in, out);
}

// For each (batch, output) the flat spatial index of the window's first maximum, -1 for an empty window.
// NaN wins over numbers (the first NaN), as max does.
// `batch` is the product of the leading axes (x.numel() / in_size fails for an empty spatial extent,
// whose windows are all empty but still produce outputs).
template <class T>
std::vector<int64_t> argmax_positions(const Array& x, const Windows& w, int64_t batch) {
  using Cmp = compute_t<T>;
  const T* src = x.data<const T>();
  std::vector<int64_t> pos(static_cast<size_t>(batch * w.out_size), -1);
  for (int64_t b = 0; b < batch; ++b) {
    const T* xb = src + b * w.in_size;
    for (int64_t o = 0; o < w.out_size; ++o) {
      int64_t best_at = -1;
      Cmp best{};
      for (int64_t j = w.start[static_cast<size_t>(o)]; j < w.start[static_cast<size_t>(o) + 1]; ++j) {
        const int64_t at = w.index[static_cast<size_t>(j)];
        const Cmp v = convert_element<Cmp>(xb[at]);
        bool better = best_at < 0 || v > best;
        if constexpr (std::is_floating_point_v<Cmp>) better = better || (std::isnan(v) && !std::isnan(best));
        if (better) {
          best = v;
          best_at = at;
        }
      }
      pos[static_cast<size_t>(b * w.out_size + o)] = best_at;
    }
  }
  return pos;
}

template <class T>
T lowest_value() {
  if constexpr (std::is_floating_point_v<compute_t<T>>) {
    return convert_element<T>(-std::numeric_limits<float>::infinity());
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

// The argmax positions of x's windows (x any non-bool dtype).
std::vector<int64_t> max_positions(const Array& x, const PoolParams& p, int64_t* out_size, int64_t* in_size) {
  const Shape in = spatial_dims(x.shape(), p.rank);
  const Windows w = pool_windows(p, in, false, false);
  *out_size = w.out_size;
  *in_size = w.in_size;
  const Array xp = x.contiguous();
  return dispatch_dtype(x.dtype(), [&](auto tag) -> std::vector<int64_t> {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      fail("max_pool: bool input reached the kernel");
    } else {
      return argmax_positions<T>(xp, w, shape_numel(leading_dims(x.shape(), p.rank)));
    }
  });
}

// out[b, o] = v[b, argmax] (or the lowest value for an empty window), v of any non-bool dtype.
Array gather_at(const Array& v, const std::vector<int64_t>& pos, int64_t in_size, int64_t out_size,
                const Shape& out_shape) {
  const Array vp = v.contiguous();
  return dispatch_dtype(v.dtype(), [&](auto tag) -> Array {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      fail("max_pool: bool input reached the kernel");
    } else {
      const T* src = vp.data<const T>();
      Array out = Array::empty(v.dtype(), out_shape);
      T* dst = out.data<T>();
      for (size_t i = 0; i < pos.size(); ++i) {
        const int64_t b = static_cast<int64_t>(i) / out_size;
        dst[i] = pos[i] < 0 ? lowest_value<T>() : src[b * in_size + pos[i]];
      }
      return out;
    }
  });
}

void require_numeric(const std::string& op, const std::vector<TensorType>& in, size_t index) {
  if (in[index].dtype == DType::boolean) ir::op_fail(op, in, "expected a numeric dtype, got bool");
}

void require_same_shape(const std::string& op, const std::vector<TensorType>& in, size_t a, size_t b,
                        const char* what) {
  if (in[a].shape != in[b].shape) {
    ir::op_fail(op, in, "{}: shapes {} and {} differ", what, shape_str(in[a].shape), shape_str(in[b].shape));
  }
}

const std::vector<ir::AttrSpec> kMaxPoolAttrs = {{"kernel", ir::AttrKind::Ints},
                                                 {"stride", ir::AttrKind::Ints},
                                                 {"padding", ir::AttrKind::Ints},
                                                 {"dilation", ir::AttrKind::Ints},
                                                 {"ceil_mode", ir::AttrKind::Bool, false}};
const std::vector<ir::AttrSpec> kAvgPoolAttrs = {{"kernel", ir::AttrKind::Ints},
                                                 {"stride", ir::AttrKind::Ints},
                                                 {"padding", ir::AttrKind::Ints},
                                                 {"count_include_pad", ir::AttrKind::Bool},
                                                 {"ceil_mode", ir::AttrKind::Bool, false}};

Attrs with_input_size(Attrs a, const Shape& in_spatial) {
  a.set("input_size", in_spatial);
  return a;
}

Attrs without_input_size(const Attrs& a) {
  Attrs out;
  for (const auto& [name, value] : a.values()) {
    if (name != "input_size") out.set(name, value);
  }
  return out;
}

// --- max pooling ------------------------------------------------------------------------------------------

void register_max_pool(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "max_pool",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = kMaxPoolAttrs,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        require_numeric("max_pool", in, 0);
        const PoolParams p = pool_params("max_pool", in, a, 0);
        const Shape& s = in[0].shape;
        return {{in[0].dtype,
                 concat_shapes(leading_dims(s, p.rank), pooled_spatial("max_pool", in, p, spatial_dims(s, p.rank)))}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        int64_t outs = 0, ins = 0;
        const std::vector<int64_t> pos = max_positions(in[0], pool_params_unchecked(a), &outs, &ins);
        return {gather_at(in[0], pos, ins, outs, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {ir::make_node1("max_pool_grad", {c.input(0), c.cotangent()}, c.attrs())};
      },
      .decompose = max_pool_decompose,
  });
  r.add(ir::OpDef{
      .name = "max_pool_grad",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = kMaxPoolAttrs,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const std::string op = "max_pool_grad";
        require_numeric(op, in, 0);
        require_floating(op, in, 1, "output gradient");
        const PoolParams p = pool_params(op, in, a, 0);
        const Shape& s = in[0].shape;
        const Shape pooled = concat_shapes(leading_dims(s, p.rank), pooled_spatial(op, in, p, spatial_dims(s, p.rank)));
        if (in[1].shape != pooled) {
          ir::op_fail(op, in, "output gradient has shape {}, expected the pooled shape {}", shape_str(in[1].shape),
                      shape_str(pooled));
        }
        return {{in[1].dtype, s}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        int64_t outs = 0, ins = 0;
        const std::vector<int64_t> pos = max_positions(in[0], pool_params_unchecked(a), &outs, &ins);
        return {with_compute_type(in[1].dtype(), "max_pool_grad", [&](auto tag) -> Array {
          using C = decltype(tag);
          const Array gp = packed_compute(in[1]);
          const C* g = gp.data<const C>();
          std::vector<double> acc(static_cast<size_t>(shape_numel(out[0].shape)), 0.0);
          for (size_t i = 0; i < pos.size(); ++i) {
            if (pos[i] >= 0) acc[static_cast<size_t>(static_cast<int64_t>(i) / outs * ins + pos[i])] += g[i];
          }
          Array dx = Array::empty(dtype_of<C>(), out[0].shape);
          C* d = dx.data<C>();
          for (size_t i = 0; i < acc.size(); ++i) d[i] = static_cast<C>(acc[i]);
          return dx;
        })};
      },
      // Linear in g; piecewise constant in x (no gradient).
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {Value(), ir::make_node1("max_pool_gather", {c.input(0), c.cotangent()}, c.attrs())};
      },
      .decompose = max_pool_grad_decompose,
  });
  r.add(ir::OpDef{
      .name = "max_pool_gather",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = kMaxPoolAttrs,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const std::string op = "max_pool_gather";
        require_numeric(op, in, 0);
        require_numeric(op, in, 1);
        require_same_shape(op, in, 0, 1, "the gathered tensor must have the pooled input's shape");
        const PoolParams p = pool_params(op, in, a, 0);
        const Shape& s = in[0].shape;
        return {
            {in[1].dtype, concat_shapes(leading_dims(s, p.rank), pooled_spatial(op, in, p, spatial_dims(s, p.rank)))}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        int64_t outs = 0, ins = 0;
        const std::vector<int64_t> pos = max_positions(in[0], pool_params_unchecked(a), &outs, &ins);
        return {gather_at(in[1], pos, ins, outs, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {Value(), ir::make_node1("max_pool_grad", {c.input(0), c.cotangent()}, c.attrs())};
      },
      .decompose = max_pool_gather_decompose,
  });
}

// --- average pooling ----------------------------------------------------------------------------------------

void register_avg_pool(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "avg_pool",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = kAvgPoolAttrs,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        require_floating("avg_pool", in, 0, "input");
        const PoolParams p = pool_params("avg_pool", in, a, 0);
        const Shape& s = in[0].shape;
        return {{in[0].dtype,
                 concat_shapes(leading_dims(s, p.rank), pooled_spatial("avg_pool", in, p, spatial_dims(s, p.rank)))}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const PoolParams p = pool_params_unchecked(a);
        const Windows w = pool_windows(p, spatial_dims(in[0].shape(), p.rank), true, a.get_bool("count_include_pad"));
        return {apply_windows(in[0], w, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const PoolParams p = pool_params_unchecked(c.attrs());
        const Attrs attrs = with_input_size(c.attrs(), spatial_dims(c.input(0).shape(), p.rank));
        return {ir::make_node1("avg_pool_grad", {c.cotangent()}, attrs)};
      },
      .decompose = avg_pool_decompose,
  });
  std::vector<ir::AttrSpec> grad_attrs = kAvgPoolAttrs;
  grad_attrs.push_back({"input_size", ir::AttrKind::Ints});
  r.add(ir::OpDef{
      .name = "avg_pool_grad",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = grad_attrs,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const std::string op = "avg_pool_grad";
        require_floating(op, in, 0, "output gradient");
        const PoolParams p = pool_params(op, in, a, 0);
        const Shape in_size = spatial_attr(op, in, a, "input_size", p.rank, 0);
        const Shape pooled = pooled_spatial(op, in, p, in_size);
        if (spatial_dims(in[0].shape, p.rank) != pooled) {
          ir::op_fail(op, in, "output gradient has spatial shape {}, but pooling an input of spatial shape {} gives {}",
                      shape_str(spatial_dims(in[0].shape, p.rank)), shape_str(in_size), shape_str(pooled));
        }
        return {{in[0].dtype, concat_shapes(leading_dims(in[0].shape, p.rank), in_size)}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Windows w =
            pool_windows(pool_params_unchecked(a), a.get_ints("input_size"), true, a.get_bool("count_include_pad"));
        return {apply_windows_transposed(in[0], w, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {ir::make_node1("avg_pool", {c.cotangent()}, without_input_size(c.attrs()))};
      },
      .decompose = avg_pool_grad_decompose,
  });
}

// --- adaptive average pooling ---------------------------------------------------------------------------------

void register_adaptive_avg_pool(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "adaptive_avg_pool",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"output_size", ir::AttrKind::Ints}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const std::string op = "adaptive_avg_pool";
        require_floating(op, in, 0, "input");
        const int64_t rank = static_cast<int64_t>(a.get_ints("output_size").size());
        if (rank < 1) ir::op_fail(op, in, "output_size must have at least one entry");
        check_pool_rank(op, in, 0, rank);
        const Shape out = spatial_attr(op, in, a, "output_size", rank, 1);
        const Shape spatial = spatial_dims(in[0].shape, rank);
        for (int64_t d : spatial) {
          if (d < 1) ir::op_fail(op, in, "spatial sizes must be positive, got {}", shape_str(spatial));
        }
        return {{in[0].dtype, concat_shapes(leading_dims(in[0].shape, rank), out)}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Shape& size = a.get_ints("output_size");
        const Windows w = adaptive_windows(spatial_dims(in[0].shape(), static_cast<int64_t>(size.size())), size);
        return {apply_windows(in[0], w, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const int64_t rank = static_cast<int64_t>(c.attrs().get_ints("output_size").size());
        return {ir::make_node1("adaptive_avg_pool_grad", {c.cotangent()},
                               Attrs{{"input_size", spatial_dims(c.input(0).shape(), rank)}})};
      },
      .decompose = adaptive_avg_pool_decompose,
  });
  r.add(ir::OpDef{
      .name = "adaptive_avg_pool_grad",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"input_size", ir::AttrKind::Ints}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const std::string op = "adaptive_avg_pool_grad";
        require_floating(op, in, 0, "output gradient");
        const int64_t rank = static_cast<int64_t>(a.get_ints("input_size").size());
        if (rank < 1) ir::op_fail(op, in, "input_size must have at least one entry");
        check_pool_rank(op, in, 0, rank);
        const Shape in_size = spatial_attr(op, in, a, "input_size", rank, 1);
        for (int64_t d : spatial_dims(in[0].shape, rank)) {
          if (d < 1) ir::op_fail(op, in, "output gradient spatial sizes must be positive");
        }
        return {{in[0].dtype, concat_shapes(leading_dims(in[0].shape, rank), in_size)}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Shape& in_size = a.get_ints("input_size");
        const Windows w = adaptive_windows(in_size, spatial_dims(in[0].shape(), static_cast<int64_t>(in_size.size())));
        return {apply_windows_transposed(in[0], w, out[0].shape)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const int64_t rank = static_cast<int64_t>(c.attrs().get_ints("input_size").size());
        return {ir::make_node1("adaptive_avg_pool", {c.cotangent()},
                               Attrs{{"output_size", spatial_dims(c.input(0).shape(), rank)}})};
      },
      .decompose = adaptive_avg_pool_grad_decompose,
  });
}

}  // namespace

// PyTorch's adaptive bins: output i averages input [floor(i * in / out), ceil((i + 1) * in / out)).
std::vector<AxisTaps> adaptive_axis_taps(const Shape& in, const Shape& out) {
  std::vector<AxisTaps> axes;
  for (size_t d = 0; d < in.size(); ++d) {
    AxisTaps taps(static_cast<size_t>(out[d]));
    for (int64_t i = 0; i < out[d]; ++i) {
      const int64_t begin = (i * in[d]) / out[d];
      const int64_t end = ((i + 1) * in[d] + out[d] - 1) / out[d];
      for (int64_t j = begin; j < end; ++j) taps[static_cast<size_t>(i)].push_back({j, 1.0 / double(end - begin)});
    }
    axes.push_back(std::move(taps));
  }
  return axes;
}

void register_pool_ops(ir::OpRegistry& r) {
  register_max_pool(r);
  register_avg_pool(r);
  register_adaptive_avg_pool(r);
}

}  // namespace tessera::ops::conv_detail
