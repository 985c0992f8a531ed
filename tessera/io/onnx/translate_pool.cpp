// MaxPool / AveragePool (1-D and 2-D) and the global pools. Tessera's pools pad symmetrically by at
// most half the kernel; other pads become an explicit pad first (with the lowest value for max, and
// for averages without count_include_pad a division by the count of real elements per window).
#include <limits>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/conv.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/reduce.h"
#include "tessera/ops/shape.h"

namespace tessera::io::onnx {

namespace {

enum class PoolKind { max, average };

std::array<int64_t, 2> as_2d(const std::vector<int64_t>& v, int64_t one_d_fill) {
  return v.size() == 1 ? std::array<int64_t, 2>{one_d_fill, v[0]} : std::array<int64_t, 2>{v[0], v[1]};
}

double lowest_value(DType dt) {
  if (is_floating(dt)) return -std::numeric_limits<double>::infinity();
  switch (dt) {
    case DType::i8: return -128;
    case DType::i32: return std::numeric_limits<int32_t>::min();
    case DType::i64: return static_cast<double>(std::numeric_limits<int64_t>::min());
    default: return 0;  // u8, bool
  }
}

std::vector<Tensor> pool(NodeContext& c, PoolKind kind) {
  Tensor x = c.input(0);
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.empty()) c.fail("attribute 'kernel_shape' is required");
  if (kernel.size() > 2) c.fail("{}-D pooling is not supported (1-D and 2-D are)", kernel.size());
  const bool max = kind == PoolKind::max;
  const WindowAttrs w = read_window(c, x.shape(), kernel, max && c.version() >= 10);
  const bool ceil_mode = c.version() >= 10 && c.attr_int("ceil_mode", 0) != 0;
  const bool include_pad = !max && c.version() >= 7 && c.attr_int("count_include_pad", 0) != 0;
  if (max) {
    if (c.version() >= 8) c.ignore_attr("storage_order");  // only orders the Indices output
    if (c.wants_output(1)) c.fail("the Indices output is not supported");
  }
  const bool one_d = kernel.size() == 1;
  if (one_d) x = ops::unsqueeze(x, 2);
  const std::array<int64_t, 2> k = as_2d(w.kernel, 1), s = as_2d(w.strides, 1), d = as_2d(w.dilations, 1);
  std::array<int64_t, 2> begin = as_2d(w.pad_begin, 0), end = as_2d(w.pad_end, 0);
  const bool fits = begin == end && begin[0] * 2 <= k[0] && begin[1] * 2 <= k[1];
  Tensor y;
  if (fits) {
    y = max ? ops::max_pool2d(x, k, s, begin, d, ceil_mode) : ops::avg_pool2d(x, k, s, begin, include_pad, ceil_mode);
  } else {
    std::vector<std::pair<int64_t, int64_t>> widths(static_cast<size_t>(x.rank() - 2), {0, 0});
    widths.emplace_back(begin[0], end[0]);
    widths.emplace_back(begin[1], end[1]);
    if (max) {
      y = ops::max_pool2d(ops::pad(x, widths, ops::PadMode::Constant, lowest_value(x.dtype())), k, s, {0, 0}, d,
                          ceil_mode);
    } else {
      y = ops::avg_pool2d(ops::pad(x, widths), k, s, {0, 0}, true, ceil_mode);
      if (!include_pad) {
        const Tensor ones = ops::pad(ops::ones_like(x), widths);
        y = y / ops::avg_pool2d(ones, k, s, {0, 0}, true, ceil_mode);
      }
    }
  }
  if (one_d) y = ops::squeeze(y, {2});
  return {y};
}

std::vector<Tensor> global_pool(NodeContext& c, PoolKind kind) {
  const Tensor x = c.input(0);
  if (x.rank() < 3) c.fail("input has rank {}, expected at least 3", x.rank());
  ops::Axes axes;
  for (int64_t i = 2; i < x.rank(); ++i) axes.push_back(i);
  return {kind == PoolKind::max ? ops::max(x, axes, true) : ops::mean(x, axes, true)};
}

}  // namespace

void add_pool_translations(TranslationTable& t) {
  t.add("MaxPool", {1, 8, 10, 11, 12}, [](NodeContext& c) { return pool(c, PoolKind::max); });
  t.add("AveragePool", {1, 7, 10, 11}, [](NodeContext& c) { return pool(c, PoolKind::average); });
  t.add("GlobalMaxPool", {1}, [](NodeContext& c) { return global_pool(c, PoolKind::max); });
  t.add("GlobalAveragePool", {1}, [](NodeContext& c) { return global_pool(c, PoolKind::average); });
}

}  // namespace tessera::io::onnx
