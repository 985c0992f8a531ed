#pragma once
// Convolution, pooling and resampling over NC(H)(W) layouts.
#include <array>
#include <vector>

#include "tessera/api/tensor.h"

namespace tessera::ops {

// x [N, Cin, L], weight [Cout, Cin/groups, K], bias [Cout] or undefined.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1, int64_t padding = 0,
              int64_t dilation = 1, int64_t groups = 1);
// x [N, Cin, H, W], weight [Cout, Cin/groups, KH, KW].
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, std::array<int64_t, 2> stride = {1, 1},
              std::array<int64_t, 2> padding = {0, 0}, std::array<int64_t, 2> dilation = {1, 1}, int64_t groups = 1);
// x [N, Cin, H, W], weight [Cin, Cout/groups, KH, KW] (PyTorch's layout).
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {},
                        std::array<int64_t, 2> stride = {1, 1}, std::array<int64_t, 2> padding = {0, 0},
                        std::array<int64_t, 2> output_padding = {0, 0}, std::array<int64_t, 2> dilation = {1, 1},
                        int64_t groups = 1);

// stride defaults to the kernel size when given as {0, 0}.
Tensor max_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride = {0, 0},
                  std::array<int64_t, 2> padding = {0, 0}, std::array<int64_t, 2> dilation = {1, 1});
Tensor avg_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride = {0, 0},
                  std::array<int64_t, 2> padding = {0, 0}, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> output_size);

enum class UpsampleMode { Nearest, Bilinear };
// Resizes the last two axes to `size`; bilinear follows PyTorch's align_corners flag.
Tensor upsample2d(const Tensor& x, std::array<int64_t, 2> size, UpsampleMode mode = UpsampleMode::Nearest,
                  bool align_corners = false);

}  // namespace tessera::ops
