#pragma once
// Shared pieces of the convolution kernels: geometry arithmetic, im2col / col2im, the work split
// and workspace layout. Internal to tessera/kernels/cpu/conv_*.cpp.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "tessera/kernels/cpu/conv.h"

namespace tessera::kernels::conv_detail {

inline int64_t in_per_group(const Conv2dGeometry& g) {
  return g.in_channels / g.groups;
}
inline int64_t out_per_group(const Conv2dGeometry& g) {
  return g.out_channels / g.groups;
}
inline int64_t taps(const Conv2dGeometry& g) {
  return g.kernel_h * g.kernel_w;
}
inline int64_t col_rows(const Conv2dGeometry& g) {
  return in_per_group(g) * taps(g);
}
inline int64_t in_plane(const Conv2dGeometry& g) {
  return g.in_h * g.in_w;
}
inline int64_t out_plane(const Conv2dGeometry& g) {
  return g.out_h * g.out_w;
}

// Floats rounded up to whole cache lines, so per-thread slices never share a line.
inline int64_t padded_floats(int64_t n) {
  return (n + 15) / 16 * 16;
}

// A 1x1, stride-1, unpadded convolution over the whole input: the image itself is the im2col matrix.
inline bool is_pointwise(const Conv2dGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 && g.pad_w == 0 &&
         g.out_h == g.in_h && g.out_w == g.in_w;
}

// Outputs o in [lo, hi) whose tap at offset `tap_offset` (= k*dilation - pad) lands inside [0, size).
inline void valid_outputs(int64_t size, int64_t out, int64_t stride, int64_t tap_offset, int64_t& lo, int64_t& hi) {
  // o*stride + tap_offset >= 0  and  o*stride + tap_offset < size
  lo = tap_offset >= 0 ? 0 : (-tap_offset + stride - 1) / stride;
  hi = size - tap_offset <= 0 ? 0 : (size - tap_offset + stride - 1) / stride;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

/// Whether every group reads one input channel (depthwise, any channel multiplier): the forward pass
/// then runs conv2d_depthwise_forward instead of a one-row im2col product per channel.
bool is_depthwise(const Conv2dGeometry& g);
/// The depthwise forward pass (conv_depthwise.cpp): bias, activation and residual applied per plane.
void conv2d_depthwise_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias, float* y,
                              const ConvEpilogue& epilogue, runtime::ThreadPool& pool);
/// The implicit-GEMM forward pass (conv_gemm.cpp) and its workspace (the weights packed per call when
/// `packed_weights` is null or in a layout this CPU no longer runs).
void implicit_gemm_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                           const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                           runtime::ThreadPool& pool);
int64_t implicit_gemm_workspace_bytes(const Conv2dGeometry& g, bool weights_packed);
/// The weights in the implicit GEMM's layout (for the tile this CPU runs, with a header saying which).
int64_t implicit_gemm_packed_floats(const Conv2dGeometry& g);
void implicit_gemm_pack_weights(const Conv2dGeometry& g, const float* w, float* packed, runtime::ThreadPool& pool);
// col[(ci*KH + kh)*KW + kw, oh*OW + ow] = x[ci, ih, iw] (0 in the padding), for the in_per_group
// channels starting at `x` (one image, one group).
void im2col(const Conv2dGeometry& g, const float* x, float* col);
// The transpose: dx[ci, ih, iw] += col[...] (dx must be initialised by the caller).
void col2im_add(const Conv2dGeometry& g, const float* col, float* dx);

// Number of per-thread workspace slices a call uses, and whether images are split over threads
// (else one image at a time, with the threads inside the GEMM).
struct Split {
  int64_t slices;
  bool over_images;
};
Split split_of(const Conv2dGeometry& g, runtime::ThreadPool& pool);

// A workspace the caller passed, or one owned for the duration of the call.
class Workspace {
 public:
  Workspace(void* given, int64_t bytes) {
    if (given != nullptr || bytes == 0) {
      data_ = static_cast<float*>(given);
    } else {
      owned_.reset(new float[static_cast<size_t>(bytes / 4 + 16)]);
      data_ = owned_.get();
    }
  }
  float* floats() const { return data_; }

 private:
  std::unique_ptr<float[]> owned_;
  float* data_ = nullptr;
};

}  // namespace tessera::kernels::conv_detail
