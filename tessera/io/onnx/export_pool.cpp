// Pooling and resampling over the trailing spatial axes:
//   max_pool / avg_pool: MaxPool / AveragePool on the value viewed as [B, C, *spatial] (leading axes
//     merged), ceil mode as explicit extra high padding (core/window.h), so the windows are Tessera's.
//     Averages whose divisor ONNX would count differently (ceil mode with count_include_pad),
//     dilated averages (not in opset 17) and integer max pools export through the decomposition.
//   adaptive_avg_pool(_grad), linear upsample(_grad): one axis at a time, a product with a constant
//     [in, out] weight matrix (its transpose for the gradient); nearest upsampling gathers.
#include <numeric>

#include "tessera/core/window.h"
#include "tessera/io/onnx/export_lower.h"
#include "tessera/ops/resample_coords.h"

namespace tessera::io::onnx {

namespace {

struct Pool {
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
  size_t rank() const { return kernel.size(); }
};

Pool pool_of(const LowerContext& c) {
  Pool p;
  p.kernel = c.attrs().get_ints("kernel");
  p.stride = c.attrs().get_ints("stride");
  p.padding = c.attrs().get_ints("padding");
  p.dilation = c.attrs().has("dilation") ? c.attrs().get_ints("dilation") : std::vector<int64_t>(p.rank(), 1);
  p.ceil_mode = c.attrs().get_bool_or("ceil_mode", false);
  return p;
}

// [begin..., end...] pads for spatial sizes `in`, the end growing for ceil mode's partial window.
std::vector<int64_t> pads_of(const Pool& p, const Shape& in, Shape* out) {
  std::vector<int64_t> low, high;
  for (size_t i = 0; i < p.rank(); ++i) {
    const int64_t count =
        sliding_window_count(in[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode);
    low.push_back(p.padding[i]);
    high.push_back(sliding_window_high_padding(in[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], count));
    out->push_back(count);
  }
  low.insert(low.end(), high.begin(), high.end());
  return low;
}

// x viewed as [B, C, *spatial] for ONNX's pools: the leading axes merged into two.
OVal as_nc(GraphBuilder& b, const OVal& x, size_t spatial) {
  const Shape lead(x.shape.begin(), x.shape.end() - static_cast<std::ptrdiff_t>(spatial));
  if (lead.size() == 2) return x;
  Shape s = {std::accumulate(lead.begin(), lead.end(), int64_t{1}, std::multiplies<>()), 1};
  s.insert(s.end(), x.shape.end() - static_cast<std::ptrdiff_t>(spatial), x.shape.end());
  return b.reshape(x, s);
}

OVal pool(LowerContext& c, const std::string& onnx_op, const Pool& p, bool count_include_pad) {
  GraphBuilder& b = c.b;
  const OVal x = as_nc(b, c.in[0], p.rank());
  const Shape in(x.shape.begin() + 2, x.shape.end());
  Shape out = {x.shape[0], x.shape[1]};
  const std::vector<int64_t> pads = pads_of(p, in, &out);
  const OVal y = b.op(onnx_op, {x}, x.dtype, out, [&](pb::NodeProto& n) {
    attr_ints(n, "kernel_shape", p.kernel);
    attr_ints(n, "strides", p.stride);
    attr_ints(n, "pads", pads);
    if (onnx_op == "MaxPool") attr_ints(n, "dilations", p.dilation);
    if (onnx_op == "AveragePool") attr_int(n, "count_include_pad", count_include_pad ? 1 : 0);
  });
  return b.reshape(y, c.out_shape());
}

// y with axis `axis` replaced by its product with m [in, out] (Transpose, MatMul, Transpose back).
OVal along_axis(GraphBuilder& b, const OVal& y, const Array& m, int64_t axis) {
  const int64_t last = y.rank() - 1;
  std::vector<int64_t> perm(static_cast<size_t>(y.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(axis)], perm[static_cast<size_t>(last)]);
  auto permuted = [&](const OVal& v) {
    if (axis == last) return v;
    Shape s = v.shape;
    std::swap(s[static_cast<size_t>(axis)], s[static_cast<size_t>(last)]);
    return b.op("Transpose", {v}, v.dtype, s, [perm](pb::NodeProto& n) { attr_ints(n, "perm", perm); });
  };
  const OVal moved = permuted(y);
  Shape s = moved.shape;
  s.back() = m.shape()[1];
  const OVal prod = b.op("MatMul", {moved, b.constant(m.astype(y.dtype), "weights")}, y.dtype, s);
  return permuted(prod);
}

// [in, out] weights of adaptive average pooling: output i averages [floor(i*in/out), ceil((i+1)*in/out)).
Array adaptive_matrix(int64_t in, int64_t out) {
  Array m = Array::full(DType::f64, {in, out}, 0.0);
  double* p = static_cast<double*>(m.raw_data());
  for (int64_t i = 0; i < out; ++i) {
    const int64_t begin = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t j = begin; j < end; ++j) p[j * out + i] = 1.0 / static_cast<double>(end - begin);
  }
  return m;
}

Array transposed(const Array& m) {
  return m.permute({1, 0}).contiguous();
}

struct Resample {
  ops::resample::Mode mode = ops::resample::Mode::nearest;
  bool align_corners = false;
  std::vector<double> scales;
};

Resample resample_of(const LowerContext& c) {
  Resample r;
  ops::resample::parse_mode(c.attrs().get_string("mode"), &r.mode);
  r.align_corners = c.attrs().get_bool("align_corners");
  if (c.attrs().has("scales")) r.scales = c.attrs().get_floats("scales");
  return r;
}

ops::resample::Axis axis_of(const Resample& r, size_t d, int64_t in, int64_t out) {
  return {in, out, r.scales.empty() ? 0.0 : r.scales[d]};
}

// [in, out] weights of resampling one axis: each output's source taps.
Array resample_matrix(const Resample& r, const ops::resample::Axis& a) {
  Array m = Array::full(DType::f64, {a.in, a.out}, 0.0);
  double* p = static_cast<double*>(m.raw_data());
  for (int64_t i = 0; i < a.out; ++i) {
    if (r.mode != ops::resample::Mode::linear) {
      p[ops::resample::nearest_source(a, i, r.mode == ops::resample::Mode::nearest_exact) * a.out + i] += 1.0;
      continue;
    }
    const ops::resample::LinearTap tap = ops::resample::linear_source(a, i, r.align_corners);
    p[tap.lo * a.out + i] += 1.0 - tap.frac;
    p[tap.hi * a.out + i] += tap.frac;
  }
  return m;
}

}  // namespace

void add_pool_exports(LoweringTable& t) {
  t.add("max_pool", [](LowerContext& c) -> std::vector<OVal> {
    const DType dt = c.in[0].dtype;
    if (!is_floating(dt) && dt != DType::u8 && dt != DType::i8) return {};
    return {pool(c, "MaxPool", pool_of(c), false)};
  });
  t.add("avg_pool", [](LowerContext& c) -> std::vector<OVal> {
    const Pool p = pool_of(c);
    const bool include_pad = c.attrs().get_bool("count_include_pad");
    if (!is_floating(c.in[0].dtype)) return {};
    for (int64_t d : p.dilation) {
      if (d != 1) return {};
    }
    if (include_pad && p.ceil_mode) return {};
    return {pool(c, "AveragePool", p, include_pad)};
  });
  t.add("adaptive_avg_pool", [](LowerContext& c) -> std::vector<OVal> {
    const std::vector<int64_t>& out = c.attrs().get_ints("output_size");
    const DType acc = widened(c.in[0].dtype);
    if (!is_floating(acc)) return {};
    OVal y = c.b.cast(c.in[0], acc);
    for (size_t d = 0; d < out.size(); ++d) {
      const int64_t axis = y.rank() - static_cast<int64_t>(out.size()) + static_cast<int64_t>(d);
      y = along_axis(c.b, y, adaptive_matrix(y.shape[static_cast<size_t>(axis)], out[d]), axis);
    }
    return {c.b.cast(y, c.out_dtype())};
  });
  t.add("adaptive_avg_pool_grad", [](LowerContext& c) -> std::vector<OVal> {
    const std::vector<int64_t>& in = c.attrs().get_ints("input_size");
    OVal y = c.b.cast(c.in[0], widened(c.in[0].dtype));
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t axis = y.rank() - static_cast<int64_t>(in.size()) + static_cast<int64_t>(d);
      y = along_axis(c.b, y, transposed(adaptive_matrix(in[d], y.shape[static_cast<size_t>(axis)])), axis);
    }
    return {c.b.cast(y, c.out_dtype())};
  });
  t.add("upsample", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const Resample r = resample_of(c);
    const std::vector<int64_t>& size = c.attrs().get_ints("size");
    const bool nearest = r.mode != ops::resample::Mode::linear;
    OVal y = nearest ? c.in[0] : b.cast(c.in[0], widened(c.in[0].dtype));
    for (size_t d = 0; d < size.size(); ++d) {
      const int64_t axis = y.rank() - static_cast<int64_t>(size.size()) + static_cast<int64_t>(d);
      const ops::resample::Axis a = axis_of(r, d, y.shape[static_cast<size_t>(axis)], size[d]);
      if (nearest) {
        // Nearest resampling copies elements: a Gather, exact for every dtype.
        std::vector<int64_t> src;
        for (int64_t i = 0; i < a.out; ++i) {
          src.push_back(ops::resample::nearest_source(a, i, r.mode == ops::resample::Mode::nearest_exact));
        }
        Shape s = y.shape;
        s[static_cast<size_t>(axis)] = a.out;
        y = b.op("Gather", {y, b.i64s(src)}, y.dtype, s, [axis](pb::NodeProto& n) { attr_int(n, "axis", axis); });
      } else {
        y = along_axis(b, y, resample_matrix(r, a), axis);
      }
    }
    return {b.cast(y, c.out_dtype())};
  });
  t.add("upsample_grad", [](LowerContext& c) -> std::vector<OVal> {
    const Resample r = resample_of(c);
    const std::vector<int64_t>& in = c.attrs().get_ints("input_size");
    OVal g = c.b.cast(c.in[0], widened(c.in[0].dtype));
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t axis = g.rank() - static_cast<int64_t>(in.size()) + static_cast<int64_t>(d);
      const ops::resample::Axis a = axis_of(r, d, in[d], g.shape[static_cast<size_t>(axis)]);
      g = along_axis(c.b, g, transposed(resample_matrix(r, a)), axis);
    }
    return {c.b.cast(g, c.out_dtype())};
  });
}

}  // namespace tessera::io::onnx
