// MaxPool / AveragePool (1-, 2- and 3-D) and the global pools. Tessera's pools pad symmetrically by at
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

double lowest_value(DType dt) {
  if (is_floating(dt)) return -std::numeric_limits<double>::infinity();
  switch (dt) {
    case DType::i8: return -128;
    case DType::i32: return std::numeric_limits<int32_t>::min();
    case DType::i64: return static_cast<double>(std::numeric_limits<int64_t>::min());
    default: return 0;  // u8, bool
  }
}

struct Window2d {
  std::array<int64_t, 2> kernel, stride, dilation, begin, end;
};

// Pools the last two axes of x (rank >= 3) through Tessera's 2-D pools.
Tensor pool_last_two(const Tensor& x, PoolKind kind, const Window2d& w, bool include_pad, bool ceil_mode) {
  const bool max = kind == PoolKind::max;
  const bool fits = w.begin == w.end && w.begin[0] * 2 <= w.kernel[0] && w.begin[1] * 2 <= w.kernel[1];
  if (fits) {
    return max ? ops::max_pool2d(x, w.kernel, w.stride, w.begin, w.dilation, ceil_mode)
               : ops::avg_pool2d(x, w.kernel, w.stride, w.begin, include_pad, ceil_mode);
  }
  std::vector<std::pair<int64_t, int64_t>> widths(static_cast<size_t>(x.rank() - 2), {0, 0});
  widths.emplace_back(w.begin[0], w.end[0]);
  widths.emplace_back(w.begin[1], w.end[1]);
  if (max) {
    return ops::max_pool2d(ops::pad(x, widths, ops::PadMode::Constant, lowest_value(x.dtype())), w.kernel, w.stride,
                           {0, 0}, w.dilation, ceil_mode);
  }
  const Tensor sums = ops::avg_pool2d(ops::pad(x, widths), w.kernel, w.stride, {0, 0}, true, ceil_mode);
  if (include_pad) return sums;
  const Tensor counts = ops::avg_pool2d(ops::pad(ops::ones_like(x), widths), w.kernel, w.stride, {0, 0}, true, ceil_mode);
  return sums / counts;
}

// The window of spatial axes [from, from + 2) (a missing first axis is a size-1 window).
Window2d window_of(const WindowAttrs& w, size_t from, bool one_axis) {
  auto pick = [&](const std::vector<int64_t>& v, int64_t fill) -> std::array<int64_t, 2> {
    return one_axis ? std::array<int64_t, 2>{fill, v[from]} : std::array<int64_t, 2>{v[from], v[from + 1]};
  };
  return {pick(w.kernel, 1), pick(w.strides, 1), pick(w.dilations, 1), pick(w.pad_begin, 0), pick(w.pad_end, 0)};
}

// 1-D pools run as 2-D pools of height 1; 3-D pools as a 2-D pool over H and W, then one over D (max
// and average windows are separable, and so are the counts that exclude padding).
std::vector<Tensor> pool(NodeContext& c, PoolKind kind) {
  Tensor x = c.input(0);
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.empty()) c.fail("attribute 'kernel_shape' is required");
  if (kernel.size() > 3) c.fail("{}-D pooling is not supported (1-D, 2-D and 3-D are)", kernel.size());
  const bool max = kind == PoolKind::max;
  const WindowAttrs w = read_window(c, x.shape(), kernel, max && c.version() >= 10);
  const bool ceil_mode = c.version() >= 10 && c.attr_int("ceil_mode", 0) != 0;
  const bool include_pad = !max && c.version() >= 7 && c.attr_int("count_include_pad", 0) != 0;
  if (max) {
    if (c.version() >= 8) c.ignore_attr("storage_order");  // only orders the Indices output
    if (c.wants_output(1)) c.fail("the Indices output is not supported");
  }
  if (kernel.size() == 1) {
    return {ops::squeeze(pool_last_two(ops::unsqueeze(x, 2), kind, window_of(w, 0, true), include_pad, ceil_mode), {2})};
  }
  if (kernel.size() == 2) return {pool_last_two(x, kind, window_of(w, 0, false), include_pad, ceil_mode)};
  const Tensor planes = pool_last_two(x, kind, window_of(w, 1, false), include_pad, ceil_mode);
  const int64_t n = planes.dim(0), ch = planes.dim(1), depth = planes.dim(2), h = planes.dim(3), wd = planes.dim(4);
  Window2d along_depth = window_of(w, 0, true);
  for (auto* field : {&along_depth.kernel, &along_depth.stride, &along_depth.dilation, &along_depth.begin, &along_depth.end}) {
    std::swap((*field)[0], (*field)[1]);  // the depth axis first, a size-1 window over the flattened planes
  }
  const Tensor y = pool_last_two(ops::reshape(planes, {n, ch, depth, h * wd}), kind, along_depth, include_pad, ceil_mode);
  return {ops::reshape(y, {n, ch, y.dim(2), h, wd})};
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
