#include "tessera/backends/vulkan/conv_shader.h"

#include "tessera/backends/vulkan/matmul_shader.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

// After the geometry's #defines: conv_tap(x0, k, j), the input element that column j of the im2col
// matrix holds at row k (zero in the padding), and conv_back_tap(dy0, k, j), the output-gradient
// element that input position j receives from tap k (zero where none: off the stride or past the
// edge); both read binding B. nchw(c, j, channels, plane): the element of channel c at GEMM column j
// (image j / plane, position j % plane). A negative int made uint wraps past every bound.
constexpr const char* kTaps = R"(#define CV_KHW (CV_KH * CV_KW)
#define CV_P (CV_OH * CV_OW)
#define CV_HW (CV_H * CV_W)
uint nchw(uint c, uint j, uint channels, uint plane) { return ((j / plane) * channels + c) * plane + j % plane; }
float conv_tap(int x0, int k, int j) {
  const uint kk = uint(k), jj = uint(j);
  const uint ci = kk / CV_KHW, t = kk - ci * CV_KHW, kh = t / CV_KW, kw = t - kh * CV_KW;
  const uint n = jj / CV_P, p = jj - n * CV_P, oh = p / CV_OW, ow = p - oh * CV_OW;
  const uint ih = uint(int(oh * CV_SH + kh * CV_DH) - CV_PH), iw = uint(int(ow * CV_SW + kw * CV_DW) - CV_PW);
  return ih < CV_H && iw < CV_W ? b[x0 + int(((n * CV_CIN + ci) * CV_H + ih) * CV_W + iw)] : 0.0;
}
float conv_back_tap(int dy0, int k, int j) {
  const uint kk = uint(k), jj = uint(j);
  const uint co = kk / CV_KHW, t = kk - co * CV_KHW, kh = t / CV_KW, kw = t - kh * CV_KW;
  const uint n = jj / CV_HW, q = jj - n * CV_HW, ih = q / CV_W, iw = q - ih * CV_W;
  const int th = int(ih) + CV_PH - int(kh * CV_DH), tw = int(iw) + CV_PW - int(kw * CV_DW);
  if (th < 0 || tw < 0) return 0.0;
  const uint oh = uint(th) / CV_SH, ow = uint(tw) / CV_SW;
  if (oh * CV_SH != uint(th) || ow * CV_SW != uint(tw) || oh >= CV_OH || ow >= CV_OW) return 0.0;
  return b[dy0 + int(((n * CV_COUT + co) * CV_OH + oh) * CV_OW + ow)];
}
)";

}  // namespace

std::string conv_product_glsl(common::ConvProduct kind, const kernels::Conv2dGeometry& g, int block, int k_split,
                              const MatvecTail& tail) {
  TESSERA_CHECK(g.groups == 1, "vulkan conv: {} groups (the shader takes one)", g.groups);
  TESSERA_CHECK(kind == common::ConvProduct::forward || tail.empty(), "vulkan conv: only the forward pass takes a tail");
  TESSERA_CHECK(kind == common::ConvProduct::weight_grad || k_split == 0, "vulkan conv: only the weight gradient splits K");
  TiledOperands ops;
  ops.definitions = common::conv_geometry_defines(g) + kTaps;
  ops.k_split = k_split;
  switch (kind) {
    case common::ConvProduct::forward:
      // A = W [Cout, Cin*kh*kw] as stored; B = the input's taps.
      ops.b = "conv_tap(b0, k, c)";
      ops.d = "int(nchw(uint(r), uint(c), CV_COUT, CV_P))";
      ops.bias_index = "r";
      break;
    case common::ConvProduct::input_grad:
      // A = W^T [Cin, Cout*kh*kw]: row r is input channel r of every output channel's kernel.
      ops.a = "a[a0 + int(((uint(k) / CV_KHW) * CV_CIN + uint(r)) * CV_KHW + uint(k) % CV_KHW)]";
      ops.b = "conv_back_tap(b0, k, c)";
      ops.d = "int(nchw(uint(r), uint(c), CV_CIN, CV_HW))";
      break;
    case common::ConvProduct::weight_grad:
      // A = dY [Cout, N*OH*OW]; B = the input's taps transposed (contiguous along k, the positions).
      ops.a = "a[a0 + int(nchw(uint(r), uint(k), CV_COUT, CV_P))]";
      ops.b = "conv_tap(b0, c, k)";
      ops.b_along_k = true;
      break;
  }
  return tiled_product_glsl(DType::f32, block, ops, tail);
}

std::string conv_split_sum_glsl() {
  return R"(#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrP { float p[]; };
layout(std430, binding = 1) writeonly buffer TsrD { float d[]; };
layout(push_constant) uniform TsrSplits { int count; int splits; int shift[2]; };
void main() {
  for (int i = int(gl_GlobalInvocationID.x); i < count; i += int(gl_NumWorkGroups.x) * 256) {
    float s = 0.0;
    for (int z = 0; z < splits; ++z) s += p[shift[0] + z * count + i];
    d[shift[1] + i] = s;
  }
}
)";
}

}  // namespace tessera::backends::vulkan
