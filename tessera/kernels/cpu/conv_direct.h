#pragma once
// The direct convolution in register tiles of output pixels x 32 output channels (AVX-512;
// conv_direct_avx512.cpp): each tap's input value is broadcast straight from the image (a zero-padded
// copy when the convolution pads) against a vector of 32 packed weights, so nothing is gathered into
// im2col panels and no column of a tile is padding (a row of 7 outputs is a tile of 7). Used for
// convolutions of one group with K = in channels x taps >= 64, pointwise ones included (those of
// fewer channels keep the implicit GEMM). Internal to tessera/kernels/cpu/conv_*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/conv_internal.h"

namespace tessera::kernels::conv_detail {

// Whether the automatic choice runs `g` as direct tiles on this CPU.
bool direct_tiles_apply(const Conv2dGeometry& g);
// The weights in direct tiles' layout (a header, then per block of 32 output channels K x 32 floats).
int64_t direct_tiles_packed_floats(const Conv2dGeometry& g);
void direct_tiles_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool);
// Whether `packed` holds g's weights in that layout.
bool direct_tiles_packed_for(const Conv2dGeometry& g, const float* packed);
// The padded input copy, and the weights when not packed beforehand.
int64_t direct_tiles_workspace_bytes(const Conv2dGeometry& g, bool weights_packed);
void direct_tiles_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                          const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                          runtime::ThreadPool& pool);

}  // namespace tessera::kernels::conv_detail
