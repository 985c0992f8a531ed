#pragma once
// 2-D convolution over NCHW float32 tensors (cross-correlation, PyTorch's layout: weight
// [Cout, Cin/groups, KH, KW]), and its two gradients, matching the IR ops `conv`,
// `conv_input_grad` and `conv_weight_grad` (tessera/ops/conv_kernels.cpp) for two spatial axes:
//   forward       y[n, co, oh, ow] = bias[co] + sum_{ci in group, kh, kw} w[co, ci', kh, kw] * x[n, ci, ih, iw]
//                 with ih = oh*stride_h - pad_h + kh*dilation_h (likewise iw); taps in the padding read 0
//   input_grad    dx = the adjoint of forward in x, for a given dy
//   weight_grad   dw = the adjoint of forward in w, for given x and dy
// out_h/out_w may be smaller than the natural output size (the IR's cropped `output_size`, and output
// gradients shorter than the natural size); rows/columns past them are simply not produced/read.
// Each call takes a caller-provided workspace of conv2d_*_workspace_bytes() (or nullptr: the kernel
// allocates one itself, for tests and one-off use), so a planned executable allocates nothing.
#include <cstdint>

#include "tessera/kernels/cpu/gemm.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

struct Conv2dGeometry {
  int64_t batch = 1, in_channels = 1, in_h = 1, in_w = 1;
  int64_t out_channels = 1, kernel_h = 1, kernel_w = 1;
  int64_t out_h = 1, out_w = 1;  // at most the natural output size
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};

// The natural output length of one spatial axis.
inline int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}
// A geometry with the natural output size.
Conv2dGeometry make_conv2d_geometry(int64_t batch, int64_t in_channels, int64_t in_h, int64_t in_w,
                                    int64_t out_channels, int64_t kernel_h, int64_t kernel_w, int64_t stride_h = 1,
                                    int64_t stride_w = 1, int64_t pad_h = 0, int64_t pad_w = 0, int64_t dilation_h = 1,
                                    int64_t dilation_w = 1, int64_t groups = 1);
// Throws tessera::Error (naming `what`) when the geometry is inconsistent.
void check_conv2d_geometry(const Conv2dGeometry& g, const char* what);

// How the forward pass is computed. `automatic`: depthwise convolutions accumulate each plane directly;
// with AVX-512, 3x3 stride-1 ones of one group with enough channels and tiles run as `winograd`, the
// other ones of one group with K >= 64 (pointwise included) as `direct_tiles` (register tiles of
// pixels x 32 output channels, each tap's input broadcast from the image); the others run as an
// `implicit_gemm` (the im2col matrix gathered panel by panel into the register tiles' layout, never
// stored whole). `im2col_gemm` (the whole im2col matrix, then SGEMM) and `direct` (plain loops) are
// kept as cross-checks. `direct_tiles` where it cannot run is the implicit GEMM. `winograd` (F(2x2, 3x3))
// and `winograd_4x4` (F(4x4, 3x3)), AVX-512, for 3x3 stride-1 convolutions of one group (the automatic
// choice where they win), where they cannot run are the automatic choice without them. `pointwise_rows` (AVX-512, pointwise convolutions of
// one group: pixel vectors x 8 channels; the automatic choice on large planes of one image) likewise.
enum class ConvAlgorithm {
  automatic,
  direct_tiles,
  implicit_gemm,
  im2col_gemm,
  direct,
  winograd,
  pointwise_rows,
  winograd_4x4
};

// Workspace sizes in bytes for a pool of `threads` threads (default: the default pool's size). The
// forward pass's, for the automatic algorithm, is 0 when `weights_packed` (conv2d_pack_weights).
int64_t conv2d_forward_workspace_bytes(const Conv2dGeometry& g, runtime::ThreadPool* pool = nullptr,
                                       bool weights_packed = false);
int64_t conv2d_input_grad_workspace_bytes(const Conv2dGeometry& g, runtime::ThreadPool* pool = nullptr);
int64_t conv2d_weight_grad_workspace_bytes(const Conv2dGeometry& g, runtime::ThreadPool* pool = nullptr);

// y = post_activation(activation(conv + bias) + residual).
struct ConvEpilogue {
  Activation activation = Activation::none;  // applied after the bias
  const float* residual = nullptr;           // same shape as y, added after the activation
  Activation post_activation = Activation::none;  // applied last (a ResNet block's ReLU after its sum)
};

// Constant weights re-laid once for the forward pass's register tiles (conv2d_forward's
// `packed_weights`), in the layout of the tile this CPU runs; a header records it, and the forward
// pass packs the weights itself when the layout is not one it runs (AVX-512 switched off since).
bool conv2d_takes_packed_weights(const Conv2dGeometry& g);  // false where the automatic choice packs nothing
int64_t conv2d_packed_weights_floats(const Conv2dGeometry& g);
// `algorithm`: the one the forward pass will be asked for (packing for what it runs there).
void conv2d_pack_weights(const Conv2dGeometry& g, const float* w, float* packed, runtime::ThreadPool* pool = nullptr,
                         ConvAlgorithm algorithm = ConvAlgorithm::automatic);

// x [N, Cin, H, W], w [Cout, Cin/groups, KH, KW], bias [Cout] or nullptr -> y [N, Cout, OH, OW].
// `packed_weights` (optional) is conv2d_pack_weights of w; w must be given all the same.
void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias, float* y,
                    void* workspace, const ConvEpilogue& epilogue = {}, runtime::ThreadPool* pool = nullptr,
                    ConvAlgorithm algorithm = ConvAlgorithm::automatic, const float* packed_weights = nullptr);
// A depthwise convolution `dw` whose result, after its bias and activation, only the pointwise (1x1,
// stride 1, one group) convolution `pw` reads: y = pw(act(dw(x) + dw_bias)) + pw's tail, computed
// band of rows by band of rows of each image, the band of every channel's depthwise rows staying in
// cache for the pointwise product instead of going out to memory and coming back (MobileNetV2's 3x3
// depthwise then 1x1 projection). `pw_packed`: conv2d_pack_weights(pw, ..., ConvAlgorithm::pointwise_rows)
// or null. conv2d_depthwise_pointwise_fuses says whether this beats the two calls on this CPU (AVX-512;
// without it the same call runs portable loops).
// `expand`: a pointwise convolution before the depthwise one whose result only it reads (MobileNetV2's
// expansion; x is then expand's input): each band first computes the expanded input rows it reads
// (rows two bands share computed twice), so neither intermediate result goes to memory.
struct ConvExpansion {
  Conv2dGeometry g;  // 1x1, one group, g.out_channels == dw.in_channels
  const float* w = nullptr;
  const float* bias = nullptr;
  Activation activation = Activation::none;
  const float* packed = nullptr;  // conv2d_pack_weights(g, w, ..., ConvAlgorithm::pointwise_rows), or null
};
bool conv2d_depthwise_pointwise_fuses(const Conv2dGeometry& dw, const Conv2dGeometry& pw);
bool conv2d_expand_depthwise_pointwise_fuses(const Conv2dGeometry& expand, const Conv2dGeometry& dw,
                                             const Conv2dGeometry& pw);
// `weights_packed`: pw's (and expand's) weights come packed.
int64_t conv2d_depthwise_pointwise_workspace_bytes(const Conv2dGeometry& dw, const Conv2dGeometry& pw,
                                                   bool weights_packed, const Conv2dGeometry* expand = nullptr);
void conv2d_depthwise_pointwise_forward(const Conv2dGeometry& dw, const float* x, const float* dw_w,
                                        const float* dw_bias, Activation dw_activation, const Conv2dGeometry& pw,
                                        const float* pw_w, const float* pw_bias, float* y, void* workspace,
                                        const ConvEpilogue& epilogue = {}, runtime::ThreadPool* pool = nullptr,
                                        const float* pw_packed = nullptr, const ConvExpansion* expand = nullptr);
// dy [N, Cout, OH, OW], w -> dx [N, Cin, H, W] (overwritten).
void conv2d_input_grad(const Conv2dGeometry& g, const float* dy, const float* w, float* dx, void* workspace,
                       runtime::ThreadPool* pool = nullptr);
// x, dy -> dw [Cout, Cin/groups, KH, KW] (overwritten).
void conv2d_weight_grad(const Conv2dGeometry& g, const float* x, const float* dy, float* dw, void* workspace,
                        runtime::ThreadPool* pool = nullptr);

}  // namespace tessera::kernels
