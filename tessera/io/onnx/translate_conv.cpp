// Conv (1-, 2- and 3-D) and ConvTranspose (1- and 2-D). ONNX pads may differ before and after an axis;
// Tessera's convolutions pad symmetrically, so uneven pads become an explicit pad (Conv) or a crop of
// the unpadded result (ConvTranspose).
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/conv.h"
#include "tessera/ops/shape.h"

namespace tessera::io::onnx {

namespace {

std::vector<int64_t> kernel_of(const NodeContext& c, const Tensor& weight) {
  const std::vector<int64_t> spatial(weight.shape().begin() + 2, weight.shape().end());
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape", spatial);
  if (kernel != spatial) c.fail("kernel_shape does not match the weight's spatial dimensions");
  return kernel;
}

std::vector<Tensor> conv(NodeContext& c) {
  Tensor x = c.input(0);
  const Tensor weight = c.input(1);
  if (weight.rank() < 3) c.fail("weight has rank {}, expected at least 3", weight.rank());
  const WindowAttrs w = read_window(c, x.shape(), kernel_of(c, weight), true);
  const int64_t groups = c.attr_int("group", 1);
  std::vector<int64_t> padding = w.pad_begin;
  if (w.pad_begin != w.pad_end) {
    std::vector<std::pair<int64_t, int64_t>> widths(2, {0, 0});
    for (size_t i = 0; i < w.pad_begin.size(); ++i) widths.emplace_back(w.pad_begin[i], w.pad_end[i]);
    x = ops::pad(x, widths);
    std::fill(padding.begin(), padding.end(), 0);
  }
  const Tensor bias = c.has_input(2) ? c.input(2) : Tensor();
  return {ops::conv(x, weight, bias, w.strides, padding, w.dilations, groups)};
}

// Computed unpadded (with output_padding's extra rows), then cropped by the pads; output_shape, when
// given, fixes the pads (split as auto_pad says, SAME_UPPER-style by default).
std::vector<Tensor> conv_transpose(NodeContext& c) {
  Tensor x = c.input(0);
  Tensor weight = c.input(1);
  const Tensor bias = c.has_input(2) ? c.input(2) : Tensor();
  const size_t spatial = static_cast<size_t>(weight.rank() - 2);
  if (spatial < 1 || spatial > 2) c.fail("{}-D transposed convolution is not supported (1-D and 2-D are)", spatial);
  const std::vector<int64_t> kernel = kernel_of(c, weight);
  const std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations = c.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> output_padding = c.attr_ints("output_padding", std::vector<int64_t>(spatial, 0));
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::vector<int64_t> output_shape = c.attr_ints("output_shape");
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  const int64_t groups = c.attr_int("group", 1);
  if (x.rank() != static_cast<int64_t>(spatial) + 2) c.fail("input has rank {}, expected {}", x.rank(), spatial + 2);
  if (strides.size() != spatial || dilations.size() != spatial || output_padding.size() != spatial ||
      pads.size() != 2 * spatial) {
    c.fail("strides, dilations, output_padding and pads must have one entry per spatial axis (pads two)");
  }
  // Each axis's unpadded length; an output_shape beyond it is reached with extra output padding.
  std::vector<int64_t> extra = output_padding, full(spatial);
  auto unpadded = [&](size_t i) {
    return (x.shape()[i + 2] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 + extra[i];
  };
  for (size_t i = 0; i < spatial; ++i) full[i] = unpadded(i);
  if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (!output_shape.empty() && output_shape.size() != spatial) {
      c.fail("output_shape has {} entries, expected {}", output_shape.size(), spatial);
    }
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t target = output_shape.empty() ? x.shape()[i + 2] * strides[i] : output_shape[i];
      const int64_t total = full[i] - target;
      if (total < 0) {
        extra[i] += -total;
        if (extra[i] >= strides[i] && extra[i] >= dilations[i]) {
          c.fail("output_shape {} needs output padding {} along axis {}, not below the stride {}", target, extra[i],
                 i + 2, strides[i]);
        }
        full[i] = unpadded(i);
        pads[i] = pads[i + spatial] = 0;
        continue;
      }
      const bool lower = auto_pad == "SAME_LOWER";
      pads[i] = lower ? total - total / 2 : total / 2;
      pads[i + spatial] = total - pads[i];
    }
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    c.fail("auto_pad {} is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad);
  }
  if (spatial == 1) {
    x = ops::unsqueeze(x, 2);
    weight = ops::unsqueeze(weight, 2);
  }
  auto pair = [&](const std::vector<int64_t>& v, int64_t one_d) -> std::array<int64_t, 2> {
    return spatial == 1 ? std::array<int64_t, 2>{one_d, v[0]} : std::array<int64_t, 2>{v[0], v[1]};
  };
  Tensor y = ops::conv_transpose2d(x, weight, bias, pair(strides, 1), {0, 0}, pair(extra, 0),
                                   pair(dilations, 1), groups);
  if (spatial == 1) y = ops::squeeze(y, {2});
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t axis = static_cast<int64_t>(i) + 2;
    if (pads[i] != 0 || pads[i + spatial] != 0) y = ops::slice(y, axis, pads[i], full[i] - pads[i + spatial]);
  }
  return {y};
}

}  // namespace

void add_conv_translations(TranslationTable& t) {
  t.add("Conv", {1, 11}, conv);
  t.add("ConvTranspose", {1, 11}, conv_transpose);
}

}  // namespace tessera::io::onnx
