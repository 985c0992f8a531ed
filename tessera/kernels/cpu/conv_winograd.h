#pragma once
// Winograd F(2x2, 3x3) for 3x3, stride-1 convolutions of one group (AVX-512; conv_winograd_avx512.cpp):
// each 2x2 block of outputs ("tile") comes from its 4x4 input patch d and the 3x3 kernel g as
//   Y = A^T [(G g G^T) . (B^T d B)] A,
// so a tile's 36 multiplies per channel pair become 16, done as 16 products (one per position of the
// 4x4 transformed patch) of [out channels x in channels] by [in channels x tiles]. The weights'
// transform U = G g G^T is packed once per executable; the input's and the output's are vectorised
// over 16 tiles of one tile row, so the NCHW planes are read and written directly.
// Internal to tessera/kernels/cpu/conv_*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/conv_internal.h"

namespace tessera::kernels::conv_detail {

// Rows of out channels per packed weight block (the product's register tile height).
constexpr int64_t kWinogradRows = 8;

// Whether g has the shape Winograd F(2x2, 3x3) computes (any CPU), and whether the automatic choice
// runs it on this one (AVX-512, channel counts where it beats direct tiles).
bool winograd_may_apply(const Conv2dGeometry& g);
bool winograd_can_run(const Conv2dGeometry& g);  // ConvAlgorithm::winograd: the shape, on an AVX-512 CPU
bool winograd_apply(const Conv2dGeometry& g);

// The transformed weights: a header, then per position (16) per block of kWinogradRows out channels
// in_channels x kWinogradRows floats (rows past out_channels zero).
int64_t winograd_packed_floats(const Conv2dGeometry& g);
void winograd_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool);
bool winograd_packed_for(const Conv2dGeometry& g, const float* packed);
constexpr int64_t kWinogradHeaderFloats = 16;

// The weights' transform when not packed beforehand (the per-thread tiles live in thread scratch).
int64_t winograd_workspace_bytes(const Conv2dGeometry& g, bool weights_packed);
void winograd_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                      const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                      runtime::ThreadPool& pool);

}  // namespace tessera::kernels::conv_detail
