// The separable window operators as products, for backends without them (Vulkan, CUDA): adaptive
// average pooling, linear resampling and both gradients contract each trailing spatial axis with an
// [out, in] matrix of that axis's taps (conv_util.h), built here as a constant in the input's dtype,
// as the StableHLO export does; the gradients use the matrices' transposes. Nearest resampling picks
// its source rows with one index_select per axis instead, so it stays exact in every dtype (the
// product would turn an inf into NaN through its zero weights). The sums run in a different order
// from the reference's combined windows, so floating results agree to rounding.
#include "tessera/ops/conv_decompose.h"
#include "tessera/ops/conv_util.h"
#include "tessera/ops/ops.h"

namespace tessera::ops::conv_detail {

namespace {

// x with axis `axis` contracted against `matrix` [from, to] (the axis has `from` entries).
Tensor contract_axis(const Tensor& x, int64_t axis, const Array& matrix) {
  const int64_t last = x.rank() - 1;
  const Tensor moved = axis == last ? x : ops::transpose(x, axis, last);
  const Tensor y = ops::matmul(moved, Tensor::from_array(matrix.astype(x.dtype())));
  return axis == last ? y : ops::transpose(y, axis, last);
}

// The trailing spatial axes of x (sizes `in`) mapped to sizes `out` through each axis's taps, or
// through their transposes (x then has sizes `out` and the result `in`).
Tensor apply_axis_taps(const Tensor& x, const std::vector<AxisTaps>& axes, const Shape& in, const Shape& out,
                       bool transposed) {
  const int64_t lead = x.rank() - static_cast<int64_t>(axes.size());
  Tensor y = x;
  for (size_t d = 0; d < axes.size(); ++d) {
    // matrix [from, to]: entry (i, o) is the weight of input i in output o (summed over repeated taps).
    const int64_t from = transposed ? out[d] : in[d], to = transposed ? in[d] : out[d];
    Array m = Array::zeros(DType::f64, {from, to});
    double* p = m.data<double>();
    for (size_t o = 0; o < axes[d].size(); ++o) {
      for (const auto& [i, w] : axes[d][o]) {
        p[transposed ? static_cast<int64_t>(o) * to + i : i * to + static_cast<int64_t>(o)] += w;
      }
    }
    y = contract_axis(y, lead + static_cast<int64_t>(d), m);
  }
  return y;
}

// Nearest resampling: along each axis, output o copies input taps[o][0].
Tensor pick_axis_taps(const Tensor& x, const std::vector<AxisTaps>& axes) {
  const int64_t lead = x.rank() - static_cast<int64_t>(axes.size());
  Tensor y = x;
  for (size_t d = 0; d < axes.size(); ++d) {
    std::vector<int64_t> source;
    for (const auto& taps : axes[d]) source.push_back(taps.front().first);
    const auto n = static_cast<int64_t>(source.size());
    y = ops::index_select(y, lead + static_cast<int64_t>(d), Tensor::from_array(Array::from_vector(source, {n})));
  }
  return y;
}

}  // namespace

std::vector<ir::Value> adaptive_avg_pool_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]);
  const Shape& out = a.get_ints("output_size");
  const Shape spatial = spatial_dims(x.shape(), static_cast<int64_t>(out.size()));
  return {apply_axis_taps(x, adaptive_axis_taps(spatial, out), spatial, out, false).value()};
}

std::vector<ir::Value> adaptive_avg_pool_grad_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor g(in[0]);
  const Shape& input_size = a.get_ints("input_size");
  const Shape spatial = spatial_dims(g.shape(), static_cast<int64_t>(input_size.size()));
  return {apply_axis_taps(g, adaptive_axis_taps(input_size, spatial), input_size, spatial, true).value()};
}

std::vector<ir::Value> upsample_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]);
  const Shape& out = a.get_ints("size");
  const Shape spatial = spatial_dims(x.shape(), static_cast<int64_t>(out.size()));
  const std::vector<AxisTaps> axes = resample_axis_taps(a, spatial, out);
  if (resample_is_nearest(a)) return {pick_axis_taps(x, axes).value()};
  return {apply_axis_taps(x, axes, spatial, out, false).value()};
}

std::vector<ir::Value> upsample_grad_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor g(in[0]);
  const Shape& input_size = a.get_ints("input_size");
  const Shape spatial = spatial_dims(g.shape(), static_cast<int64_t>(input_size.size()));
  return {apply_axis_taps(g, resample_axis_taps(a, input_size, spatial), input_size, spatial, true).value()};
}

}  // namespace tessera::ops::conv_detail
