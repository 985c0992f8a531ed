#pragma once
// Depthwise convolution planes (one input channel per group): the portable plane loop and its AVX-512
// form, and the tail they share. Internal to tessera/kernels/cpu/conv_depthwise*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/conv_internal.h"

namespace tessera::kernels::conv_detail {

// What follows the bias on one output plane: y = post(act(y) + residual).
struct DepthwiseTail {
  Activation activation = Activation::none;
  const float* residual = nullptr;  // this plane's, or null
  Activation post_activation = Activation::none;
  // Non-temporal stores for whole, aligned vectors: the output is far larger than the caches (it is
  // read back from memory anyway, and these skip reading each line before writing it).
  bool stream = false;
  // The plane row that y (and residual) point at: 0 for a whole plane, a band's first row otherwise.
  int64_t first_row = 0;
  // Likewise the input row that x points at (a band of an expansion's rows holds only those it needs).
  int64_t input_first_row = 0;
};
// Orders a task's non-temporal stores before whatever reads them next.
void depthwise_store_fence();

// The AVX-512 planes' masks cover rows of up to kMaxDepthwiseOutW outputs and kernels that wide.
constexpr int64_t kMaxDepthwiseKernelW = 16;
constexpr int64_t kMaxDepthwiseOutW = 512;
bool can_run_depthwise_avx512(const Conv2dGeometry& g);

// Per chunk of 16 outputs of a row: the lanes to store, and per tap column the input lanes to load
// (relative to the chunk's first tap). The same for every plane of a call.
struct DepthwiseMasks {
  uint64_t load[kMaxDepthwiseOutW / 16][kMaxDepthwiseKernelW];
  uint32_t store[kMaxDepthwiseOutW / 16];
  // Planes of up to kMaxFlatPlane outputs, 3x3, stride 1, padded to the same size (MobileNetV2's 7x7):
  // the plane as one run of positions, 16 a vector across rows, per vector and tap the lanes whose
  // input lies in the plane (flat_plane: whether this call uses them).
  static constexpr int64_t kMaxFlatPlane = 64;
  bool flat_plane = false;
  uint16_t flat[kMaxFlatPlane / 16][9];
};
DepthwiseMasks depthwise_masks(const Conv2dGeometry& g);

// y = tail(bias + sum over taps of w[kh, kw] * x[...]) for one plane; x is the input channel's plane.
void depthwise_plane_avx512(const Conv2dGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w,
                            float bias, const DepthwiseTail& tail, float* y);
// Rows [tail.first_row, end) of a plane into y (row first_row at y), for the depthwise + pointwise
// bands (conv_depthwise_pointwise.cpp); tail's activations must be ones applied in registers.
void depthwise_rows_avx512(const Conv2dGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w,
                           float bias, const DepthwiseTail& tail, float* y, int64_t end);
// The portable form of the same rows, bias and activation only (x at input row input_first_row).
void depthwise_rows(const Conv2dGeometry& g, const float* x, int64_t input_first_row, const float* w, float bias,
                    Activation activation, float* y, int64_t begin, int64_t end);
// The tail on a plane that holds bias + taps already.
void finish_depthwise_plane(const Conv2dGeometry& g, const DepthwiseTail& tail, float* y);

}  // namespace tessera::kernels::conv_detail
