#pragma once
// Sliding-window taps as graph ops, shared by the convolution and pooling decompositions
// (conv_decompose.cpp, pool_decompose.cpp). One axis at a time, a window of `kernel` taps over `out`
// positions reads input position o * stride - padding + k * dilation; the taps are laid out as
// k * out + o along that axis. They are built with gather (and scatter_add for the adjoint) on small
// constant index vectors, because the CUDA backend keeps gather and scatter_add but not pad, concat
// or stack; positions in the padding or past the input are masked with `where`.
#include <vector>

#include "tessera/api/tensor.h"

namespace tessera::ops::conv_detail {

struct AxisWindow {
  int64_t size = 0, kernel = 1, out = 0, stride = 1, padding = 0, dilation = 1;
  int64_t position(int64_t k, int64_t o) const { return o * stride - padding + k * dilation; }
  bool inside(int64_t k, int64_t o) const { return position(k, o) >= 0 && position(k, o) < size; }
  bool all_inside() const;
};

// x [..., size (at `axis`), ...] -> [..., kernel * out, ...]; taps outside the input read `fill`.
Tensor unfold_axis(const Tensor& x, int64_t axis, const AxisWindow& w, double fill);
// The adjoint: taps [..., kernel * out, ...] summed back into [..., size, ...]; taps outside the input
// are dropped (`masked`: they may hold non-zero values that must not land on the clamped position).
Tensor fold_axis(const Tensor& taps, int64_t axis, const AxisWindow& w, bool masked = true);

// unfold_axis over the trailing windows.size() axes, then regrouped: x [..., *size] ->
// [..., K1, O1, K2, O2, ...] (`split`) as the per-axis gathers leave it.
Tensor unfold_all(const Tensor& x, const std::vector<AxisWindow>& windows, double fill);
// fold_axis over the trailing axes of taps [..., K1, O1, K2, O2, ...] -> [..., *size].
Tensor fold_all(const Tensor& taps, const std::vector<AxisWindow>& windows, bool masked = true);

// The lowest value of a dtype (-inf for floating types): the fill of max pooling.
double lowest_of(DType dt);

}  // namespace tessera::ops::conv_detail
