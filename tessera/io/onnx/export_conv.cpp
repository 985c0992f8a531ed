// Convolution and its gradients, any number of spatial axes:
//   conv:             Conv (pads on both sides, bias as the third input), cropped to output_size.
//   conv_input_grad:  ConvTranspose of the cotangent with the same kernel, output_padding reaching the
//                     input's size exactly.
//   conv_weight_grad: a Conv of x with channels as the batch by the cotangent with N as the input
//                     feature (stride and dilation trade places), cropped to the kernel and transposed;
//                     grouped ones export through their decomposition.
#include <fmt/format.h>

#include "tessera/io/onnx/export_lower.h"

namespace tessera::io::onnx {

namespace {

struct ConvAttrs {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
};

ConvAttrs conv_attrs(const LowerContext& c) {
  return {c.attrs().get_ints("stride"), c.attrs().get_ints("padding"), c.attrs().get_ints("dilation"),
          c.attrs().get_int("groups")};
}

std::vector<int64_t> twice(const std::vector<int64_t>& v) {
  std::vector<int64_t> out = v;
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

// The leading part of each spatial axis (a no-op when the shapes agree).
OVal crop(GraphBuilder& b, const OVal& y, const Shape& want) {
  if (y.shape == want) return y;
  std::vector<int64_t> axes, zeros;
  for (int64_t d = 0; d < y.rank(); ++d) {
    axes.push_back(d);
    zeros.push_back(0);
  }
  return b.op("Slice", {y, b.i64s(zeros), b.i64s(want), b.i64s(axes)}, y.dtype, want);
}

std::vector<int64_t> swap01(int64_t rank) {
  std::vector<int64_t> perm = {1, 0};
  for (int64_t d = 2; d < rank; ++d) perm.push_back(d);
  return perm;
}

OVal transpose01(GraphBuilder& b, const OVal& x) {
  Shape s = x.shape;
  std::swap(s[0], s[1]);
  const std::vector<int64_t> perm = swap01(x.rank());
  return b.op("Transpose", {x}, x.dtype, s, [perm](pb::NodeProto& n) { attr_ints(n, "perm", perm); });
}

}  // namespace

void add_conv_exports(LoweringTable& t) {
  t.add("conv", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const OVal &x = c.in[0], &w = c.in[1];
    const ConvAttrs a = conv_attrs(c);
    const size_t sr = static_cast<size_t>(x.rank() - 2);
    Shape natural = {x.shape[0], w.shape[0]};
    for (size_t i = 0; i < sr; ++i) {
      const int64_t eff = a.dilation[i] * (w.shape[i + 2] - 1) + 1;
      natural.push_back((x.shape[i + 2] + 2 * a.padding[i] - eff) / a.stride[i] + 1);
    }
    std::vector<OVal> in = {x, w};
    if (c.in.size() == 3) in.push_back(c.in[2]);
    const OVal y = b.op("Conv", in, x.dtype, natural, [a](pb::NodeProto& n) {
      attr_ints(n, "strides", a.stride);
      attr_ints(n, "pads", twice(a.padding));
      attr_ints(n, "dilations", a.dilation);
      attr_int(n, "group", a.groups);
    });
    return {crop(b, y, c.out_shape())};
  });

  t.add("conv_input_grad", [](LowerContext& c) -> std::vector<OVal> {
    const OVal &g = c.in[0], &w = c.in[1];
    const ConvAttrs a = conv_attrs(c);
    const std::vector<int64_t>& in_size = c.attrs().get_ints("input_size");
    const size_t sr = static_cast<size_t>(g.rank() - 2);
    std::vector<int64_t> extra;
    for (size_t i = 0; i < sr; ++i) {
      const int64_t eff = a.dilation[i] * (w.shape[i + 2] - 1) + 1;
      const int64_t natural = a.stride[i] * (g.shape[i + 2] - 1) + eff - 2 * a.padding[i];
      extra.push_back(in_size[i] - natural);
      // ONNX Runtime takes output_padding below the stride only; other shapes decompose.
      if (extra.back() < 0 || extra.back() >= std::max(a.stride[i], a.dilation[i])) return {};
    }
    return {c.op("ConvTranspose", {g, w}, [a, extra](pb::NodeProto& n) {
      attr_ints(n, "strides", a.stride);
      attr_ints(n, "pads", twice(a.padding));
      attr_ints(n, "dilations", a.dilation);
      attr_ints(n, "output_padding", extra);
      attr_int(n, "group", a.groups);
    })};
  });

  t.add("conv_weight_grad", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const OVal &x = c.in[0], &g = c.in[1];
    const ConvAttrs a = conv_attrs(c);
    if (a.groups != 1) return {};
    const std::vector<int64_t>& kernel = c.attrs().get_ints("kernel_size");
    const size_t sr = static_cast<size_t>(x.rank() - 2);
    std::vector<int64_t> pads_low, pads_high;
    Shape natural = {x.shape[1], g.shape[1]};  // [C, O, *k'] before the transpose
    for (size_t i = 0; i < sr; ++i) {
      const size_t ax = i + 2;
      // Enough high padding for `kernel` outputs; any extra output is cropped below.
      const int64_t span = (g.shape[ax] - 1) * a.stride[i] + 1;
      const int64_t need = (kernel[i] - 1) * a.dilation[i] + span - x.shape[ax] - a.padding[i];
      const int64_t hi = std::max<int64_t>(need, 0);
      pads_low.push_back(a.padding[i]);
      pads_high.push_back(hi);
      natural.push_back((x.shape[ax] + a.padding[i] + hi - span) / a.dilation[i] + 1);
    }
    std::vector<int64_t> pads = pads_low;
    pads.insert(pads.end(), pads_high.begin(), pads_high.end());
    const OVal y = b.op("Conv", {transpose01(b, x), transpose01(b, g)}, x.dtype, natural, [a, pads](pb::NodeProto& n) {
      attr_ints(n, "strides", a.dilation);
      attr_ints(n, "pads", pads);
      attr_ints(n, "dilations", a.stride);
    });
    Shape want = {x.shape[1], g.shape[1]};
    want.insert(want.end(), kernel.begin(), kernel.end());
    return {transpose01(b, crop(b, y, want))};
  });
}

}  // namespace tessera::io::onnx
