#pragma once
// Convolution, pooling and resampling over NC(H)(W) layouts.
#include <array>
#include <vector>

#include "tessera/api/tensor.h"

namespace tessera::ops {

// N-d convolution (cross-correlation, as in PyTorch): x [N, Cin, *spatial], weight [Cout, Cin/groups, *kernel],
// bias [Cout] or undefined; stride, padding and dilation have one entry per spatial axis.
Tensor conv(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::vector<int64_t>& stride,
            const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups = 1);
// The gradients of conv as functions of their own (each differentiable again): the input gradient (a
// transposed convolution of grad_out [N, Cout, *out] by weight, giving [N, Cin, *input_spatial]) and the
// weight gradient (giving [Cout, Cin/groups, *kernel_spatial]).
Tensor conv_input_grad(const Tensor& grad_out, const Tensor& weight, const Shape& input_spatial,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                       const std::vector<int64_t>& dilation, int64_t groups = 1);
// The weight gradient of that convolution: [Cout, Cin/groups, *kernel_spatial] from x and grad_out.
Tensor conv_weight_grad(const Tensor& x, const Tensor& grad_out, const Shape& kernel_spatial,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                        const std::vector<int64_t>& dilation, int64_t groups = 1);

// x [N, Cin, L], weight [Cout, Cin/groups, K], bias [Cout] or undefined.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1, int64_t padding = 0,
              int64_t dilation = 1, int64_t groups = 1);
// x [N, Cin, H, W], weight [Cout, Cin/groups, KH, KW].
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, std::array<int64_t, 2> stride = {1, 1},
              std::array<int64_t, 2> padding = {0, 0}, std::array<int64_t, 2> dilation = {1, 1}, int64_t groups = 1);
// x [N, Cin, H, W], weight [Cin, Cout/groups, KH, KW] (PyTorch's layout). Output size per axis:
// (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1, where output_padding must be
// smaller than stride or dilation.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {},
                        std::array<int64_t, 2> stride = {1, 1}, std::array<int64_t, 2> padding = {0, 0},
                        std::array<int64_t, 2> output_padding = {0, 0}, std::array<int64_t, 2> dilation = {1, 1},
                        int64_t groups = 1);

// Pooling acts on the last two axes of a [..., C, H, W] input (rank >= 3). stride defaults to the kernel
// size when given as {0, 0}; padding may be at most half the kernel. max_pool2d pads with -inf and its
// gradient goes to the first maximum of each window in row-major scan order (ties: the first one).
// Output size per axis (PyTorch's): floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1,
// or with ceil_mode the ceiling, less one when that last window would start in the right padding (a
// last window must start inside the input or the left padding).
// avg_pool2d divides by the taps inside the input, or with count_include_pad by the window clipped to
// the padded input: the kernel size, except for a partial last window in ceil mode (as PyTorch).
// Argument order: avg_pool2d takes count_include_pad before ceil_mode, PyTorch the other way round.
Tensor max_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride = {0, 0},
                  std::array<int64_t, 2> padding = {0, 0}, std::array<int64_t, 2> dilation = {1, 1},
                  bool ceil_mode = false);
// Mean of each window of x [N, C, H, W]; stride {0, 0} means the kernel size. count_include_pad counts
// padded zeros in the divisor (PyTorch's default).
Tensor avg_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride = {0, 0},
                  std::array<int64_t, 2> padding = {0, 0}, bool count_include_pad = true, bool ceil_mode = false);
// Output cell i averages input [floor(i * in / out), ceil((i + 1) * in / out)) along each axis (PyTorch's bins).
Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> output_size);

// PyTorch's interpolate modes 'nearest', 'nearest-exact' and 'bilinear'.
enum class UpsampleMode { Nearest, NearestExact, Bilinear };
// Resizes the last two axes to `size`. Source index of output position dst along an axis of in -> out:
//   Nearest       src = floor(dst * in / out)            (PyTorch's 'nearest')
//   NearestExact  src = floor((dst + 0.5) * in / out)    (PyTorch's 'nearest-exact': centres align)
// both clamped to in - 1 and computed exactly in integers (PyTorch's f32 ratio occasionally picks the
// neighbour, e.g. 'nearest' from 2 to 82 at dst 41); they copy elements, so every dtype works.
// Bilinear follows PyTorch's align_corners flag (tessera/ops/resample_coords.h has the formulas).
Tensor upsample2d(const Tensor& x, std::array<int64_t, 2> size, UpsampleMode mode = UpsampleMode::Nearest,
                  bool align_corners = false);
// Resizes by scale factors (h, w), as PyTorch's interpolate(scale_factor=...): the output size is
// floor(in * scale) per axis, and source coordinates use the ratio 1 / scale (PyTorch's default,
// recompute_scale_factor=False), rounded to f32 for the nearest modes as PyTorch does, so the indices
// match PyTorch's. align_corners maps corners by size and ignores the factors, as PyTorch does. For
// PyTorch's recompute_scale_factor=True pass the size instead.
Tensor upsample2d_scaled(const Tensor& x, std::array<double, 2> scale_factors,
                         UpsampleMode mode = UpsampleMode::Nearest, bool align_corners = false);
// The same factor on both axes (F.interpolate(x, scale_factor=2.0)).
Tensor upsample2d(const Tensor& x, double scale_factor, UpsampleMode mode = UpsampleMode::Nearest,
                  bool align_corners = false);

}  // namespace tessera::ops
