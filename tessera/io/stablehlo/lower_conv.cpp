// Convolution and its two gradients as stablehlo.convolution, any number of spatial axes.
//   conv:             x [N, C, *s] * w [O, C/G, *k] with feature_group_count = G.
//   conv_input_grad:  the transposed convolution: g, dilated by the stride and edge-padded (stablehlo.pad
//                     takes negative widths, which crop), correlated with the spatially reversed kernel
//                     regrouped to [O/G, C, *k].
//   conv_weight_grad: x (channels as the batch, N as the feature) correlated with g (N as the input
//                     feature), the stride becoming the kernel dilation; G groups use batch_group_count.
#include <fmt/format.h>

#include "tessera/io/stablehlo/lower.h"

namespace tessera::io::stablehlo {

namespace {

// "b, f, 0, 1" style dimension labels for `spatial` trailing axes after two named ones.
std::string labels(const char* first, const char* second, int64_t spatial) {
  std::string s = fmt::format("{}, {}", first, second);
  for (int64_t i = 0; i < spatial; ++i) s += fmt::format(", {}", i);
  return s;
}

struct ConvAttrs {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
};

ConvAttrs conv_attrs(const LowerContext& c) {
  return {c.attrs().get_ints("stride"), c.attrs().get_ints("padding"), c.attrs().get_ints("dilation"),
          c.attrs().get_int("groups")};
}

std::vector<int64_t> ones(size_t n) {
  return std::vector<int64_t>(n, 1);
}

}  // namespace

void add_conv_lowerings(LoweringTable& t) {
  t.add("conv", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Val &x = c.in[0], &w = c.in[1];
    const ConvAttrs a = conv_attrs(c);
    const int64_t sr = x.rank() - 2;
    Emitter::ConvSpec s;
    s.lhs = labels("b", "f", sr);
    s.rhs = labels("o", "i", sr);
    s.out = labels("b", "f", sr);
    s.stride = a.stride;
    s.lhs_dilation = ones(static_cast<size_t>(sr));
    s.rhs_dilation = a.dilation;
    Shape natural = {x.shape[0], w.shape[0]};
    for (int64_t d = 0; d < sr; ++d) {
      const size_t i = static_cast<size_t>(d);
      s.padding.push_back({a.padding[i], a.padding[i]});
      const int64_t eff = a.dilation[i] * (w.shape[i + 2] - 1) + 1;
      natural.push_back((x.shape[i + 2] + 2 * a.padding[i] - eff) / a.stride[i] + 1);
    }
    s.feature_groups = a.groups;
    s.highest = c.highest();
    Val y = e.convolution(x, w, s, natural);
    // output_size keeps only the leading part of each spatial axis.
    y = e.slice(y, std::vector<int64_t>(natural.size(), 0), c.out_shape());
    if (c.in.size() == 3) {
      y = e.add(y, e.broadcast_in_dim(c.in[2], y.shape, {1}));
    }
    return {y};
  });

  t.add("conv_input_grad", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Val &g = c.in[0], &w = c.in[1];
    const ConvAttrs a = conv_attrs(c);
    const std::vector<int64_t>& in_size = c.attrs().get_ints("input_size");
    const int64_t sr = g.rank() - 2, groups = a.groups;
    const int64_t out_ch = w.shape[0], in_per_group = w.shape[1];
    // Dilate g by the stride and pad so that a stride-1 correlation lands exactly on the input.
    std::vector<int64_t> low(static_cast<size_t>(g.rank()), 0), high = low, interior = low;
    for (int64_t d = 0; d < sr; ++d) {
      const size_t i = static_cast<size_t>(d), ax = i + 2;
      const int64_t eff = a.dilation[i] * (w.shape[ax] - 1) + 1;
      low[ax] = eff - 1 - a.padding[i];
      high[ax] = in_size[i] + a.padding[i] - 1 - (g.shape[ax] - 1) * a.stride[i];
      interior[ax] = a.stride[i] - 1;
    }
    const Val gp = e.pad(g, e.splat(0.0, g.elem), low, high, interior);
    // Kernel [O, C/G, *k] -> [O/G, C, *k]: group j's output channels become input features, its
    // input channels output features j*C/G + c.
    Val k = e.reverse(w, iota_axes(sr, 2));
    if (groups > 1) {
      Shape split = {groups, out_ch / groups, in_per_group};
      Shape spatial(w.shape.begin() + 2, w.shape.end());
      split.insert(split.end(), spatial.begin(), spatial.end());
      k = e.reshape(k, split);
      std::vector<int64_t> perm = {1, 0, 2};
      for (int64_t d = 0; d < sr; ++d) perm.push_back(d + 3);
      k = e.transpose(k, perm);
      Shape merged = {out_ch / groups, groups * in_per_group};
      merged.insert(merged.end(), spatial.begin(), spatial.end());
      k = e.reshape(k, merged);
    }
    Emitter::ConvSpec s;
    s.lhs = labels("b", "f", sr);
    s.rhs = labels("i", "o", sr);
    s.out = labels("b", "f", sr);
    s.stride = ones(static_cast<size_t>(sr));
    s.lhs_dilation = ones(static_cast<size_t>(sr));
    s.rhs_dilation = a.dilation;
    s.padding.assign(static_cast<size_t>(sr), {0, 0});
    s.feature_groups = groups;
    s.highest = c.highest();
    return {e.convolution(gp, k, s, c.out_shape())};
  });

  t.add("conv_weight_grad", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Val &x = c.in[0], &g = c.in[1];
    const ConvAttrs a = conv_attrs(c);
    const std::vector<int64_t>& kernel = c.attrs().get_ints("kernel_size");
    const int64_t sr = x.rank() - 2, groups = a.groups;
    Emitter::ConvSpec s;
    s.lhs = labels("f", "b", sr);  // x: N is the contracted feature, C the batch
    s.rhs = labels("i", "o", sr);  // g: N in, O out
    s.out = labels("f", "b", sr);  // [O, C/G, *k]
    s.stride = a.dilation;
    s.lhs_dilation = ones(static_cast<size_t>(sr));
    s.rhs_dilation = a.stride;
    Shape natural = {g.shape[1], x.shape[1] / groups};
    for (int64_t d = 0; d < sr; ++d) {
      const size_t i = static_cast<size_t>(d), ax = i + 2;
      // Enough high padding for `kernel` outputs; any extra output is sliced off below.
      const int64_t span = (g.shape[ax] - 1) * a.stride[i] + 1;
      const int64_t need = (kernel[i] - 1) * a.dilation[i] + span - x.shape[ax] - a.padding[i];
      const int64_t hi = std::max<int64_t>(need, 0);
      s.padding.push_back({a.padding[i], hi});
      natural.push_back((x.shape[ax] + a.padding[i] + hi - span) / a.dilation[i] + 1);
    }
    s.batch_groups = groups;
    s.highest = c.highest();
    const Val y = e.convolution(x, g, s, natural);
    return {e.slice(y, std::vector<int64_t>(natural.size(), 0), c.out_shape())};
  });
}

}  // namespace tessera::io::stablehlo
