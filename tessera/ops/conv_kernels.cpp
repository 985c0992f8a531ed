// N-d convolution and its two gradients, each a registered op with its own reference kernel and VJP:
//   conv(x, w[, b])              y[n, co, o]  = b[co] + sum_{ci in group, k} w[co, ci', k] x[n, ci, o*s - p + k*d]
//   conv_input_grad(g, w)        the adjoint of conv in x (a transposed convolution), bilinear in (g, w)
//   conv_weight_grad(x, g)       the adjoint of conv in w, bilinear in (x, g)
// Because the three are adjoints of one bilinear form <g, conv(x, w)>, each one's VJP is made of the
// other two, so derivatives of any order stay inside this family. Layouts are NC* / OI* (PyTorch's).
#include <algorithm>

#include "tessera/ir/op_def.h"
#include "tessera/ops/conv.h"
#include "tessera/ops/conv_decompose.h"
#include "tessera/ops/conv_util.h"
#include "tessera/ops/ops.h"

namespace tessera::ops::conv_detail {

namespace {
using ir::Value;
using ir::VjpContext;

const std::vector<ir::AttrSpec> kConvAttrs = {{"stride", ir::AttrKind::Ints},
                                              {"padding", ir::AttrKind::Ints},
                                              {"dilation", ir::AttrKind::Ints},
                                              {"groups", ir::AttrKind::Int}};

std::vector<ir::AttrSpec> conv_attrs_plus(const std::string& name, bool required) {
  std::vector<ir::AttrSpec> specs = kConvAttrs;
  specs.push_back({name, ir::AttrKind::Ints, required});
  return specs;
}

struct ConvParams {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

// Validated stride/padding/dilation/groups for `spatial_rank` spatial axes.
ConvParams conv_params(const std::string& op, const std::vector<TensorType>& in, const Attrs& a, int64_t spatial_rank) {
  ConvParams p;
  p.stride = spatial_attr(op, in, a, "stride", spatial_rank, 1);
  p.padding = spatial_attr(op, in, a, "padding", spatial_rank, 0);
  p.dilation = spatial_attr(op, in, a, "dilation", spatial_rank, 1);
  p.groups = a.get_int("groups");
  if (p.groups < 1) ir::op_fail(op, in, "groups must be positive, got {}", p.groups);
  return p;
}

void check_groups(const std::string& op, const std::vector<TensorType>& in, int64_t in_channels, int64_t out_channels,
                  int64_t groups) {
  if (in_channels % groups != 0) {
    ir::op_fail(op, in, "groups {} does not divide the {} input channels", groups, in_channels);
  }
  if (out_channels % groups != 0) {
    ir::op_fail(op, in, "groups {} does not divide the {} output channels", groups, out_channels);
  }
}

void check_rank(const std::string& op, const std::vector<TensorType>& in, const char* layout) {
  if (in[0].rank() < 3 || in[1].rank() != in[0].rank()) {
    ir::op_fail(op, in,
                "expected {} of equal rank >= 3 (batch, channel and at least one spatial axis), got ranks {} and {}",
                layout, in[0].rank(), in[1].rank());
  }
}

// The node's attributes re-read without checks (they were validated when the node was built).
SlidingWindow window_of(const Attrs& a, const Shape& in, const Shape& kernel, const Shape& out) {
  return {in, kernel, out, a.get_ints("stride"), a.get_ints("padding"), a.get_ints("dilation")};
}

Attrs base_attrs(const Attrs& a) {
  return Attrs{{"stride", a.get_ints("stride")},
               {"padding", a.get_ints("padding")},
               {"dilation", a.get_ints("dilation")},
               {"groups", a.get_int("groups")}};
}

// --- reference kernels, computing in C (float or double) and accumulating in double -------------------

template <class F>
void for_each_run(const TapRuns& runs, int64_t tap, F&& f) {
  for (int64_t i = runs.start[static_cast<size_t>(tap)]; i < runs.start[static_cast<size_t>(tap) + 1]; ++i) {
    f(runs.runs[static_cast<size_t>(i)]);
  }
}

// sum_j g[j] * x[j * step] over one run, with four partial sums to shorten the dependency chain.
template <class C>
double dot_run(const C* g, const C* x, const TapRun& run) {
  double part[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t j = 0;
  for (; j + 4 <= run.count; j += 4) {
    for (int64_t u = 0; u < 4; ++u) {
      part[u] += static_cast<double>(g[j + u]) * static_cast<double>(x[(j + u) * run.in_step]);
    }
  }
  for (; j < run.count; ++j) part[0] += static_cast<double>(g[j]) * static_cast<double>(x[j * run.in_step]);
  return (part[0] + part[1]) + (part[2] + part[3]);
}

template <class C>
Array conv_forward(const Array& x, const Array& w, const Array* bias, const SlidingWindow& win, int64_t groups,
                   const Shape& out_shape) {
  const int64_t batch = x.shape()[0], in_ch = x.shape()[1], out_ch = w.shape()[0], in_per_group = w.shape()[1];
  const int64_t out_per_group = out_ch / groups;
  const int64_t in_size = shape_numel(win.in), taps = shape_numel(win.kernel), outs = shape_numel(win.out);
  const TapRuns runs = tap_runs(win);
  const C* xs = x.data<const C>();
  const C* ws = w.data<const C>();
  const C* bs = bias ? bias->data<const C>() : nullptr;
  Array out = Array::empty(dtype_of<C>(), out_shape);
  C* ys = out.data<C>();
  std::vector<double> acc(static_cast<size_t>(outs));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t co = 0; co < out_ch; ++co) {
      const int64_t group = co / out_per_group;
      std::fill(acc.begin(), acc.end(), bs ? static_cast<double>(bs[co]) : 0.0);
      for (int64_t cl = 0; cl < in_per_group; ++cl) {
        const C* xp = xs + (n * in_ch + group * in_per_group + cl) * in_size;
        const C* wp = ws + (co * in_per_group + cl) * taps;
        for (int64_t k = 0; k < taps; ++k) {
          const double wk = static_cast<double>(wp[k]);
          for_each_run(runs, k, [&](const TapRun& run) {
            double* a = acc.data() + run.out_start;
            const C* xr = xp + run.in_start;
            if (run.in_step == 1) {  // the common case, kept separate so that it vectorises
              for (int64_t j = 0; j < run.count; ++j) a[j] += wk * static_cast<double>(xr[j]);
            } else {
              for (int64_t j = 0; j < run.count; ++j) a[j] += wk * static_cast<double>(xr[j * run.in_step]);
            }
          });
        }
      }
      C* yp = ys + (n * out_ch + co) * outs;
      for (int64_t o = 0; o < outs; ++o) yp[o] = static_cast<C>(acc[static_cast<size_t>(o)]);
    }
  }
  return out;
}

template <class C>
Array conv_input_grad_kernel(const Array& g, const Array& w, const SlidingWindow& win, int64_t groups,
                             const Shape& out_shape) {
  const int64_t batch = g.shape()[0], out_ch = w.shape()[0], in_per_group = w.shape()[1];
  const int64_t out_per_group = out_ch / groups, in_ch = in_per_group * groups;
  const int64_t in_size = shape_numel(win.in), taps = shape_numel(win.kernel), outs = shape_numel(win.out);
  const TapRuns runs = tap_runs(win);
  const C* gs = g.data<const C>();
  const C* ws = w.data<const C>();
  Array out = Array::empty(dtype_of<C>(), out_shape);
  C* dx = out.data<C>();
  std::vector<double> acc(static_cast<size_t>(in_size));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t ci = 0; ci < in_ch; ++ci) {
      const int64_t group = ci / in_per_group, cl = ci % in_per_group;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t oc = 0; oc < out_per_group; ++oc) {
        const int64_t co = group * out_per_group + oc;
        const C* gp = gs + (n * out_ch + co) * outs;
        const C* wp = ws + (co * in_per_group + cl) * taps;
        for (int64_t k = 0; k < taps; ++k) {
          const double wk = static_cast<double>(wp[k]);
          for_each_run(runs, k, [&](const TapRun& run) {
            double* a = acc.data() + run.in_start;
            const C* gr = gp + run.out_start;
            if (run.in_step == 1) {
              for (int64_t j = 0; j < run.count; ++j) a[j] += wk * static_cast<double>(gr[j]);
            } else {
              for (int64_t j = 0; j < run.count; ++j) a[j * run.in_step] += wk * static_cast<double>(gr[j]);
            }
          });
        }
      }
      C* dp = dx + (n * in_ch + ci) * in_size;
      for (int64_t i = 0; i < in_size; ++i) dp[i] = static_cast<C>(acc[static_cast<size_t>(i)]);
    }
  }
  return out;
}

template <class C>
Array conv_weight_grad_kernel(const Array& x, const Array& g, const SlidingWindow& win, int64_t groups,
                              const Shape& out_shape) {
  const int64_t batch = x.shape()[0], in_ch = x.shape()[1], out_ch = g.shape()[1];
  const int64_t in_per_group = in_ch / groups, out_per_group = out_ch / groups;
  const int64_t in_size = shape_numel(win.in), taps = shape_numel(win.kernel), outs = shape_numel(win.out);
  const TapRuns runs = tap_runs(win);
  const C* xs = x.data<const C>();
  const C* gs = g.data<const C>();
  Array out = Array::empty(dtype_of<C>(), out_shape);
  C* dw = out.data<C>();
  for (int64_t co = 0; co < out_ch; ++co) {
    const int64_t group = co / out_per_group;
    for (int64_t cl = 0; cl < in_per_group; ++cl) {
      for (int64_t k = 0; k < taps; ++k) {
        double acc = 0.0;
        for (int64_t n = 0; n < batch; ++n) {
          const C* xp = xs + (n * in_ch + group * in_per_group + cl) * in_size;
          const C* gp = gs + (n * out_ch + co) * outs;
          for_each_run(runs, k,
                       [&](const TapRun& run) { acc += dot_run<C>(gp + run.out_start, xp + run.in_start, run); });
        }
        dw[(co * in_per_group + cl) * taps + k] = static_cast<C>(acc);
      }
    }
  }
  return out;
}

// --- shape rules ------------------------------------------------------------------------------------------

std::vector<TensorType> conv_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const std::string op = "conv";
  check_rank(op, in, "input [N, Cin, *spatial] and weight [Cout, Cin/groups, *kernel]");
  require_floating(op, in, 0, "input");
  for (size_t i = 1; i < in.size(); ++i) require_same_dtype(op, in, 0, i);
  const int64_t rank = in[0].rank() - 2;
  const ConvParams p = conv_params(op, in, a, rank);
  const Shape& xs = in[0].shape;
  const Shape& ws = in[1].shape;
  check_groups(op, in, xs[1], ws[0], p.groups);
  if (xs[1] != p.groups * ws[1]) {
    ir::op_fail(op, in, "input has {} channels but weight {} expects groups x weight.shape[1] = {} x {} = {}", xs[1],
                shape_str(ws), p.groups, ws[1], p.groups * ws[1]);
  }
  if (in.size() == 3 && in[2].shape != Shape{ws[0]}) {
    ir::op_fail(op, in, "bias must have shape [{}] (one per output channel), got {}", ws[0], shape_str(in[2].shape));
  }
  Shape out = {xs[0], ws[0]};
  for (int64_t d = 0; d < rank; ++d) {
    const size_t i = static_cast<size_t>(d);
    out.push_back(window_out_size(op, in, d, xs[i + 2], ws[i + 2], p.stride[i], p.padding[i], p.dilation[i]));
  }
  // output_size crops the output (used by the gradients of transposed convolutions whose output_padding
  // makes the input longer than the convolution needs).
  if (a.has("output_size")) {
    const std::vector<int64_t> req = spatial_attr(op, in, a, "output_size", rank, 0);
    for (int64_t d = 0; d < rank; ++d) {
      const size_t i = static_cast<size_t>(d);
      if (req[i] > out[i + 2]) {
        ir::op_fail(op, in, "output_size {} exceeds the convolution's output size {}", shape_str(req),
                    shape_str(spatial_dims(out, rank)));
      }
      out[i + 2] = req[i];
    }
  }
  return {{in[0].dtype, out}};
}

// Checks that a gradient of spatial size `grad_out` fits the convolution of `in_size` by `kernel`.
void check_grad_fits(const std::string& op, const std::vector<TensorType>& in, const ConvParams& p,
                     const Shape& in_size, const Shape& kernel, const Shape& grad_out) {
  for (size_t i = 0; i < in_size.size(); ++i) {
    const int64_t natural = window_out_size(op, in, static_cast<int64_t>(i), in_size[i], kernel[i], p.stride[i],
                                            p.padding[i], p.dilation[i]);
    if (grad_out[i] > natural) {
      ir::op_fail(op, in,
                  "output gradient has spatial size {} along spatial axis {}, but a convolution of size {} with kernel "
                  "{} gives only {}",
                  grad_out[i], i, in_size[i], kernel[i], natural);
    }
  }
}

std::vector<TensorType> input_grad_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const std::string op = "conv_input_grad";
  check_rank(op, in, "output gradient [N, Cout, *out_spatial] and weight [Cout, Cin/groups, *kernel]");
  require_floating(op, in, 0, "output gradient");
  require_same_dtype(op, in, 0, 1);
  const int64_t rank = in[0].rank() - 2;
  const ConvParams p = conv_params(op, in, a, rank);
  const Shape in_size = spatial_attr(op, in, a, "input_size", rank, 0);
  const Shape& gs = in[0].shape;
  const Shape& ws = in[1].shape;
  if (gs[1] != ws[0]) {
    ir::op_fail(op, in, "output gradient has {} channels but weight {} has {} output channels", gs[1], shape_str(ws),
                ws[0]);
  }
  check_groups(op, in, ws[1] * p.groups, ws[0], p.groups);
  check_grad_fits(op, in, p, in_size, spatial_dims(ws, rank), spatial_dims(gs, rank));
  return {{in[0].dtype, concat_shapes({gs[0], ws[1] * p.groups}, in_size)}};
}

std::vector<TensorType> weight_grad_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const std::string op = "conv_weight_grad";
  check_rank(op, in, "input [N, Cin, *spatial] and output gradient [N, Cout, *out_spatial]");
  require_floating(op, in, 0, "input");
  require_same_dtype(op, in, 0, 1);
  const int64_t rank = in[0].rank() - 2;
  const ConvParams p = conv_params(op, in, a, rank);
  const Shape kernel = spatial_attr(op, in, a, "kernel_size", rank, 1);
  const Shape& xs = in[0].shape;
  const Shape& gs = in[1].shape;
  if (xs[0] != gs[0]) ir::op_fail(op, in, "batch sizes differ: {} and {}", xs[0], gs[0]);
  check_groups(op, in, xs[1], gs[1], p.groups);
  check_grad_fits(op, in, p, spatial_dims(xs, rank), kernel, spatial_dims(gs, rank));
  return {{in[0].dtype, concat_shapes({gs[1], xs[1] / p.groups}, kernel)}};
}

// --- gradient rules -----------------------------------------------------------------------------------------

// conv(x, w) cropped to `out_spatial` when that is smaller than its natural output.
Tensor conv_to(const Tensor& x, const Tensor& w, const Attrs& a, const Shape& out_spatial) {
  const int64_t rank = x.rank() - 2;
  Attrs attrs = base_attrs(a);
  const Shape natural = [&] {
    Shape s;
    for (int64_t d = 0; d < rank; ++d) {
      const size_t i = static_cast<size_t>(d);
      s.push_back(window_out_size_unchecked(x.shape()[i + 2], w.shape()[i + 2], a.get_ints("stride")[i],
                                            a.get_ints("padding")[i], a.get_ints("dilation")[i]));
    }
    return s;
  }();
  if (natural != out_spatial) attrs.set("output_size", out_spatial);
  return ir::make_node1("conv", {x, w}, std::move(attrs));
}

Tensor input_grad_of(const Tensor& g, const Tensor& w, const Attrs& a, const Shape& in_spatial) {
  Attrs attrs = base_attrs(a);
  attrs.set("input_size", in_spatial);
  return ir::make_node1("conv_input_grad", {g, w}, std::move(attrs));
}

Tensor weight_grad_of(const Tensor& x, const Tensor& g, const Attrs& a, const Shape& kernel) {
  Attrs attrs = base_attrs(a);
  attrs.set("kernel_size", kernel);
  return ir::make_node1("conv_weight_grad", {x, g}, std::move(attrs));
}

std::vector<Value> conv_vjp(const VjpContext& c) {
  const Tensor x(c.input(0)), w(c.input(1)), g(c.cotangent());
  const int64_t rank = x.rank() - 2;
  std::vector<Value> grads = {input_grad_of(g, w, c.attrs(), spatial_dims(x.shape(), rank)),
                              weight_grad_of(x, g, c.attrs(), spatial_dims(w.shape(), rank))};
  if (c.inputs.size() == 3) {
    Axes axes = {0};
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d + 2);
    grads.push_back(sum(g, axes));
  }
  return grads;
}

std::vector<Value> input_grad_vjp(const VjpContext& c) {
  const Tensor g(c.input(0)), w(c.input(1)), ct(c.cotangent());
  const int64_t rank = g.rank() - 2;
  return {conv_to(ct, w, c.attrs(), spatial_dims(g.shape(), rank)),
          weight_grad_of(ct, g, c.attrs(), spatial_dims(w.shape(), rank))};
}

std::vector<Value> weight_grad_vjp(const VjpContext& c) {
  const Tensor x(c.input(0)), g(c.input(1)), ct(c.cotangent());
  const int64_t rank = x.rank() - 2;
  return {input_grad_of(g, ct, c.attrs(), spatial_dims(x.shape(), rank)),
          conv_to(x, ct, c.attrs(), spatial_dims(g.shape(), rank))};
}

}  // namespace

void register_conv_kernel_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "conv",
      .min_inputs = 2,
      .max_inputs = 3,
      .attrs = conv_attrs_plus("output_size", false),
      .infer = conv_infer,
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const int64_t rank = in[0].rank() - 2;
        const SlidingWindow win = window_of(a, spatial_dims(in[0].shape(), rank), spatial_dims(in[1].shape(), rank),
                                            spatial_dims(out[0].shape, rank));
        return {with_compute_type(in[0].dtype(), "conv", [&](auto tag) -> Array {
          using C = decltype(tag);
          const Array bias = in.size() == 3 ? packed_compute(in[2]) : Array();
          return conv_forward<C>(packed_compute(in[0]), packed_compute(in[1]), bias.defined() ? &bias : nullptr, win,
                                 a.get_int("groups"), out[0].shape);
        })};
      },
      .vjp = conv_vjp,
      .decompose = conv_decompose,
  });
  r.add(ir::OpDef{
      .name = "conv_input_grad",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = conv_attrs_plus("input_size", true),
      .infer = input_grad_infer,
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const int64_t rank = in[0].rank() - 2;
        const SlidingWindow win = window_of(a, a.get_ints("input_size"), spatial_dims(in[1].shape(), rank),
                                            spatial_dims(in[0].shape(), rank));
        return {with_compute_type(in[0].dtype(), "conv_input_grad", [&](auto tag) -> Array {
          using C = decltype(tag);
          return conv_input_grad_kernel<C>(packed_compute(in[0]), packed_compute(in[1]), win, a.get_int("groups"),
                                           out[0].shape);
        })};
      },
      .vjp = input_grad_vjp,
      .decompose = conv_input_grad_decompose,
  });
  r.add(ir::OpDef{
      .name = "conv_weight_grad",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = conv_attrs_plus("kernel_size", true),
      .infer = weight_grad_infer,
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const int64_t rank = in[0].rank() - 2;
        const SlidingWindow win = window_of(a, spatial_dims(in[0].shape(), rank), a.get_ints("kernel_size"),
                                            spatial_dims(in[1].shape(), rank));
        return {with_compute_type(in[0].dtype(), "conv_weight_grad", [&](auto tag) -> Array {
          using C = decltype(tag);
          return conv_weight_grad_kernel<C>(packed_compute(in[0]), packed_compute(in[1]), win, a.get_int("groups"),
                                            out[0].shape);
        })};
      },
      .vjp = weight_grad_vjp,
      .decompose = conv_weight_grad_decompose,
  });
}

}  // namespace tessera::ops::conv_detail
