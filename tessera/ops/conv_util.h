#pragma once
// Shared machinery of the convolution, pooling and resampling ops (internal to tessera/ops/conv_*.cpp):
// attribute checks whose errors name the op and its inputs, sliding-window geometry, and reference
// kernels for "window" operators out[b, o] = sum_j weight_j * x[b, index_j] and their transposes.
// Spatial axes are always the trailing ones; everything before them is flattened into a batch b.
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/op_def.h"

namespace tessera::ops::conv_detail {

using ir::Attrs;
using ir::TensorType;

// --- attribute and shape checks (all failures go through ir::op_fail) ---------------------------------

// An Ints attribute with one entry per spatial axis, each >= min_value (0 or 1).
std::vector<int64_t> spatial_attr(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs,
                                  const std::string& name, int64_t spatial_rank, int64_t min_value);
// Output length of a window of size `kernel` (dilated by `dilation`) sliding with `stride` over an axis of
// length `size` padded by `padding` on both sides; fails when the dilated kernel exceeds the padded axis.
int64_t window_out_size(const std::string& op, const std::vector<TensorType>& in, int64_t axis, int64_t size,
                        int64_t kernel, int64_t stride, int64_t padding, int64_t dilation);
// As window_out_size, without checks (for kernels, whose node was validated at construction).
inline int64_t window_out_size_unchecked(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                                         int64_t dilation) {
  return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
}
void require_floating(const std::string& op, const std::vector<TensorType>& in, size_t index, const char* role);
void require_same_dtype(const std::string& op, const std::vector<TensorType>& in, size_t a, size_t b);
// The trailing `spatial_rank` dimensions of a shape, and the leading ones.
Shape spatial_dims(const Shape& shape, int64_t spatial_rank);
Shape leading_dims(const Shape& shape, int64_t spatial_rank);
Shape concat_shapes(const Shape& a, const Shape& b);

// --- reference-kernel helpers ---------------------------------------------------------------------------

// `a` packed contiguously in the type kernels compute in: f16/bf16 widen to f32, others are kept.
Array packed_compute(const Array& a);

// Runs f(C{}) with C the compute type (float or double) of floating dtype `dt`; f returns an Array of
// dtype C, which is narrowed back to `dt` for f16/bf16.
template <class F>
Array with_compute_type(DType dt, const char* what, F&& f) {
  return dispatch_floating(dt, what, [&](auto tag) -> Array {
    using C = compute_t<decltype(tag)>;
    Array result = f(C{});
    return result.dtype() == dt ? result : result.astype(dt);
  });
}

// Geometry of a sliding window over the trailing spatial axes.
struct SlidingWindow {
  Shape in, kernel, out;
  std::vector<int64_t> stride, padding, dilation;
};
// For kernel tap k (row-major over the kernel), the output positions o whose window reads a real input
// element (not padding) form runs along the last spatial axis: outputs out_start + j read the flat input
// index in_start + j * in_step, for j < count. Kernels loop over runs without per-element branches.
struct TapRun {
  int64_t out_start, in_start, in_step, count;
};
struct TapRuns {
  std::vector<int64_t> start;  // runs of tap k: runs[start[k] .. start[k + 1])
  std::vector<TapRun> runs;
};
TapRuns tap_runs(const SlidingWindow& w);

// One list of (input index, weight) pairs per output index along one axis.
using AxisTaps = std::vector<std::vector<std::pair<int64_t, double>>>;
// A window operator on flattened spatial positions: output o reads index[start[o] .. start[o+1]) with
// the matching weights. Multi-axis windows are the Cartesian product of per-axis taps, visited in
// row-major order (the first axis slowest), which is also PyTorch's scan order for max pooling.
struct Windows {
  int64_t in_size = 0;
  int64_t out_size = 0;
  std::vector<int64_t> start;
  std::vector<int64_t> index;
  std::vector<double> weight;
};
Windows combine_axis_taps(const std::vector<AxisTaps>& axes, const Shape& in, const Shape& out);
// Per-axis taps of the separable window operators: PyTorch's adaptive average bins (conv_pool.cpp) and
// resampling by the attributes of upsample / upsample_grad (conv_upsample.cpp), from spatial sizes
// `in` to `out`.
std::vector<AxisTaps> adaptive_axis_taps(const Shape& in, const Shape& out);
std::vector<AxisTaps> resample_axis_taps(const Attrs& a, const Shape& in, const Shape& out);
bool resample_is_nearest(const Attrs& a);  // one tap of weight 1 per output (nearest, nearest-exact)
// Taps of a sliding window along one axis (weight 1), skipping taps in the padding.
AxisTaps sliding_axis_taps(int64_t size, int64_t kernel, int64_t out, int64_t stride, int64_t padding,
                           int64_t dilation);

// out[b, o] = sum_j weight_j * x[b, index_j], x floating; the result has shape `out_shape`.
Array apply_windows(const Array& x, const Windows& w, const Shape& out_shape);
// The transpose: dx[b, index_j] += weight_j * g[b, o]; the result has shape `in_shape`.
Array apply_windows_transposed(const Array& g, const Windows& w, const Shape& in_shape);
// out[b, o] = x[b, index_{start[o]}] for any dtype (a pure gather, e.g. nearest resampling).
Array gather_windows(const Array& x, const Windows& w, const Shape& out_shape);

// --- registration (one function per file) ----------------------------------------------------------------
void register_conv_kernel_ops(ir::OpRegistry& r);  // conv_kernels.cpp: conv, conv_input_grad, conv_weight_grad
void register_pool_ops(ir::OpRegistry& r);         // conv_pool.cpp: max/avg/adaptive pooling and their grads
void register_upsample_ops(ir::OpRegistry& r);     // conv_upsample.cpp: upsample, upsample_grad

}  // namespace tessera::ops::conv_detail
