#pragma once
// Pointwise (1x1, stride 1, unpadded) convolutions of one group with few input channels, on AVX-512
// (conv_pointwise_avx512.cpp): Y[co, pixels] = W[co, :] X[:, pixels] with the pixels of an NCHW plane
// as the vectors, read straight from the image (no panel copies), and the weights broadcast, in
// register tiles of 8 output channels x 48 pixels; bias, activation and residual are applied before
// the one store. MobileNetV2's layers on large planes at batch 1 run here: the implicit GEMM copies
// every input panel, direct tiles (pixel broadcasts, 32-channel vectors) turn few products per tile
// around when there are few input channels. Internal to tessera/kernels/cpu/conv_*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/conv_internal.h"

namespace tessera::kernels::conv_detail {

constexpr int64_t kPointwiseRows = 8;  // output channels per packed weight block

// Whether the automatic choice runs g here on this CPU (and whether it could on some CPU).
bool pointwise_rows_may_apply(const Conv2dGeometry& g);
bool pointwise_rows_can_run(const Conv2dGeometry& g);  // ConvAlgorithm::pointwise_rows: the shape, with AVX-512
bool pointwise_rows_apply(const Conv2dGeometry& g);

// The weights: a header, then per block of 8 output channels in_channels x 8 floats (rows past
// out_channels zero).
int64_t pointwise_rows_packed_floats(const Conv2dGeometry& g);
void pointwise_rows_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool);
bool pointwise_rows_packed_for(const Conv2dGeometry& g, const float* packed);
int64_t pointwise_rows_workspace_bytes(const Conv2dGeometry& g, bool weights_packed);
void pointwise_rows_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                            const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                            runtime::ThreadPool& pool);
// `count` pixels on this thread, with weights packed here (pointwise_rows_packed_for): input channel c
// of pixel i at x[c * in_stride + i], output at y[c * out_stride + i], the residual's at
// epilogue.residual + residual_offset + the same. A band of another kernel's output still in cache, or
// the band one goes on to read (the depthwise + pointwise bands, conv_depthwise_pointwise.cpp).
void pointwise_rows_pixels(const Conv2dGeometry& g, const float* packed_weights, const float* bias,
                           const ConvEpilogue& epilogue, const float* x, int64_t in_stride, float* y,
                           int64_t out_stride, int64_t residual_offset, int64_t count);

}  // namespace tessera::kernels::conv_detail
