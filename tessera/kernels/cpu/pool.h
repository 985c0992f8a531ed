#pragma once
// 2-D pooling over the last two axes of float32 [planes, H, W] tensors (planes = N * C, or any
// product of leading axes), matching the IR ops `max_pool`, `max_pool_grad`, `avg_pool` and
// `avg_pool_grad` (tessera/ops/conv_pool.cpp):
//   max_pool       max over each window; padding counts as -inf; NaN wins (the first NaN)
//   max_pool_grad  dy routed to each window's first maximum in row-major scan order (recomputed from x,
//                  so no argmax indices are stored)
//   avg_pool       mean over each window; the divisor is the window clipped to the padded input with
//                  count_include_pad (KH*KW but for a partial last window in ceil mode), else the number
//                  of taps inside the input
// ceil_mode keeps a partial last window as PyTorch does (tessera/core/window.h has the output size).
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

struct Pool2dGeometry {
  int64_t planes = 1, in_h = 1, in_w = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t out_h = 1, out_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;  // max pooling only
  bool ceil_mode = false;
};

// A geometry with the natural output size; stride 0 means "the kernel size" (PyTorch's default).
Pool2dGeometry make_pool2d_geometry(int64_t planes, int64_t in_h, int64_t in_w, int64_t kernel_h, int64_t kernel_w,
                                    int64_t stride_h = 0, int64_t stride_w = 0, int64_t pad_h = 0, int64_t pad_w = 0,
                                    int64_t dilation_h = 1, int64_t dilation_w = 1, bool ceil_mode = false);

void max_pool2d_forward(const Pool2dGeometry& g, const float* x, float* y, runtime::ThreadPool* pool = nullptr);
// dx (overwritten) [planes, H, W] from x and dy [planes, OH, OW].
void max_pool2d_backward(const Pool2dGeometry& g, const float* x, const float* dy, float* dx,
                         runtime::ThreadPool* pool = nullptr);

void avg_pool2d_forward(const Pool2dGeometry& g, bool count_include_pad, const float* x, float* y,
                        runtime::ThreadPool* pool = nullptr);
// dx (overwritten) from dy.
void avg_pool2d_backward(const Pool2dGeometry& g, bool count_include_pad, const float* dy, float* dx,
                         runtime::ThreadPool* pool = nullptr);

}  // namespace tessera::kernels
