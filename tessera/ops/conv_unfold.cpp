#include "tessera/ops/conv_unfold.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "tessera/ops/ops.h"

namespace tessera::ops::conv_detail {

namespace {

// The clamped input position of every tap (k * out + o) and whether it lies inside the input.
struct AxisIndex {
  std::vector<int64_t> position;
  std::vector<uint8_t> inside;
};

AxisIndex axis_index(const AxisWindow& w) {
  AxisIndex a;
  for (int64_t k = 0; k < w.kernel; ++k) {
    for (int64_t o = 0; o < w.out; ++o) {
      a.position.push_back(std::clamp<int64_t>(w.position(k, o), 0, w.size - 1));
      a.inside.push_back(w.inside(k, o) ? 1 : 0);
    }
  }
  return a;
}

// A [1, ..., kernel * out (at axis), ..., 1] constant, broadcast where it is used.
Shape along(int64_t rank, int64_t axis, int64_t n) {
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(axis)] = n;
  return s;
}

Tensor inside_mask(const AxisIndex& a, const Shape& shape) {
  return Tensor::from_array(Array::from_vector(a.inside, shape).astype(DType::boolean));
}

}  // namespace

bool AxisWindow::all_inside() const {
  for (int64_t k = 0; k < kernel; ++k) {
    for (int64_t o = 0; o < out; ++o) {
      if (!inside(k, o)) return false;
    }
  }
  return true;
}

Tensor unfold_axis(const Tensor& x, int64_t axis, const AxisWindow& w, double fill) {
  const AxisIndex a = axis_index(w);
  const Shape one = along(x.rank(), axis, w.kernel * w.out);
  Shape shape = x.shape();
  shape[static_cast<size_t>(axis)] = w.kernel * w.out;
  const Tensor index = broadcast_to(Tensor::from_array(Array::from_vector(a.position, one)), shape);
  const Tensor taps = gather(x, axis, index);
  if (w.all_inside()) return taps;
  return where(inside_mask(a, one), taps, full({}, fill, x.dtype()));
}

Tensor fold_axis(const Tensor& taps, int64_t axis, const AxisWindow& w, bool masked) {
  const AxisIndex a = axis_index(w);
  const Shape one = along(taps.rank(), axis, w.kernel * w.out);
  const Tensor index = broadcast_to(Tensor::from_array(Array::from_vector(a.position, one)), taps.shape());
  const Tensor src = masked && !w.all_inside() ? where(inside_mask(a, one), taps, zeros({}, taps.dtype())) : taps;
  Shape out = taps.shape();
  out[static_cast<size_t>(axis)] = w.size;
  return scatter_add(zeros(out, taps.dtype()), axis, index, src);
}

Tensor unfold_all(const Tensor& x, const std::vector<AxisWindow>& windows, double fill) {
  const int64_t lead = x.rank() - static_cast<int64_t>(windows.size());
  Tensor t = x;
  Shape split(x.shape().begin(), x.shape().begin() + lead);
  for (size_t d = 0; d < windows.size(); ++d) {
    t = unfold_axis(t, lead + static_cast<int64_t>(d), windows[d], fill);
    split.push_back(windows[d].kernel);
    split.push_back(windows[d].out);
  }
  return reshape(t, split);
}

Tensor fold_all(const Tensor& taps, const std::vector<AxisWindow>& windows, bool masked) {
  const int64_t lead = taps.rank() - 2 * static_cast<int64_t>(windows.size());
  Shape merged(taps.shape().begin(), taps.shape().begin() + lead);
  for (const AxisWindow& w : windows) merged.push_back(w.kernel * w.out);
  Tensor t = reshape(taps, merged);
  for (size_t d = windows.size(); d-- > 0;) t = fold_axis(t, lead + static_cast<int64_t>(d), windows[d], masked);
  return t;
}

double lowest_of(DType dt) {
  switch (dt) {
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16:
      return -std::numeric_limits<double>::infinity();
    case DType::i8:
      return std::numeric_limits<int8_t>::lowest();
    case DType::i32:
      return std::numeric_limits<int32_t>::lowest();
    case DType::i64:
      return static_cast<double>(std::numeric_limits<int64_t>::lowest());
    default:
      return 0.0;  // u8, bool
  }
}

}  // namespace tessera::ops::conv_detail
