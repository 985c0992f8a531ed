#include "tessera/backends/cuda/conv_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace tessera::backends::cuda {

// The geometry as constants, and the two tap readers: the input element output position j reads at
// tap k (zero in the padding), and the output-gradient element input position j receives from tap k
// (zero where no output position reads it: off the stride or past the edge).
extern const char* const kConvTaps = R"(
#define CV_KHW (CV_KH * CV_KW)
#define CV_P (CV_OH * CV_OW)
#define CV_HW (CV_H * CV_W)

__device__ __forceinline__ float tsr_conv_tap(const float* x, long long k, long long j) {
  const unsigned kk = (unsigned)k, jj = (unsigned)j;
  const unsigned ci = kk / CV_KHW, t = kk - ci * CV_KHW, kh = t / CV_KW, kw = t - kh * CV_KW;
  const unsigned n = jj / CV_P, p = jj - n * CV_P, oh = p / CV_OW, ow = p - oh * CV_OW;
  const int ih = (int)(oh * CV_SH + kh * CV_DH) - CV_PH, iw = (int)(ow * CV_SW + kw * CV_DW) - CV_PW;
  return (unsigned)ih < CV_H && (unsigned)iw < CV_W ? x[((n * CV_CIN + ci) * CV_H + ih) * CV_W + iw] : 0.f;
}

__device__ __forceinline__ float tsr_conv_back_tap(const float* dy, long long k, long long j) {
  const unsigned kk = (unsigned)k, jj = (unsigned)j;
  const unsigned co = kk / CV_KHW, t = kk - co * CV_KHW, kh = t / CV_KW, kw = t - kh * CV_KW;
  const unsigned n = jj / CV_HW, q = jj - n * CV_HW, ih = q / CV_W, iw = q - ih * CV_W;
  const int th = (int)(ih + CV_PH) - (int)(kh * CV_DH), tw = (int)(iw + CV_PW) - (int)(kw * CV_DW);
  if (th < 0 || tw < 0) return 0.f;
  const unsigned oh = (unsigned)th / CV_SH, ow = (unsigned)tw / CV_SW;
  if (oh * CV_SH != (unsigned)th || ow * CV_SW != (unsigned)tw || oh >= CV_OH || ow >= CV_OW) return 0.f;
  return dy[((n * CV_COUT + co) * CV_OH + oh) * CV_OW + ow];
}

// An NCHW tensor's element (image, channel c of `channels`, position q of `plane`) at GEMM index
// (c, image * plane + q).
#define TSR_NCHW(c, j, channels, plane) \
  ((((unsigned)(j) / (plane)) * (channels) + (unsigned)(c)) * (plane) + (unsigned)(j) % (plane))
)";

namespace {

// Per product: which operand index runs along a warp's loads (the one contiguous in memory), and how
// A, B and D map onto the tensors.
constexpr const char* kForward = R"(
#define TSR_A_T 0
#define TSR_B_T 0
#define TSR_A(r, k) a[(r) * (CV_CIN * CV_KHW) + (k)]
#define TSR_B(k, c) tsr_conv_tap(b, k, c)
#define TSR_D(r, c) TSR_NCHW(r, c, CV_COUT, CV_P)
#define TSR_BIAS(r, c) (r)
)";

constexpr const char* kInputGrad = R"(
#define TSR_A_T 0
#define TSR_B_T 0
#define TSR_A(r, k) a[(((unsigned)(k) / CV_KHW) * CV_CIN + (unsigned)(r)) * CV_KHW + (unsigned)(k) % CV_KHW]
#define TSR_B(k, c) tsr_conv_back_tap(b, k, c)
#define TSR_D(r, c) TSR_NCHW(r, c, CV_CIN, CV_HW)
#define TSR_BIAS(r, c) (r)
)";

constexpr const char* kWeightGrad = R"(
#define TSR_A_T 0
#define TSR_B_T 1
#define TSR_A(r, k) a[TSR_NCHW(r, k, CV_COUT, CV_P)]
#define TSR_B(k, c) tsr_conv_tap(b, c, k)
#define TSR_D(r, c) ((r) * (CV_CIN * CV_KHW) + (c))
#define TSR_BIAS(r, c) (c)
)";

bool conv_gemm_enabled() {
  const char* env = std::getenv("TESSERA_CUDA_CONV_GEMM");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

}  // namespace

std::string conv_description(ConvProduct kind, const kernels::Conv2dGeometry& g, const ConvTail& tail) {
  return fmt::format("{} {}{}{}{}", common::conv_product_name(kind), common::conv_geometry_description(g),
                     tail.bias ? " +bias" : "", tail.residual ? " +residual" : "",
                     tail.activation == GemmActivation::relu   ? " relu"
                     : tail.activation == GemmActivation::gelu ? " gelu"
                                                               : "");
}

bool conv_gemm_suits(const kernels::Conv2dGeometry& g) {
  return conv_gemm_enabled() && g.groups == 1 && common::implicit_gemm_indices_fit(g);
}

std::unique_ptr<SimtGemm> make_conv_gemm(Context& ctx, ConvProduct kind, const kernels::Conv2dGeometry& g,
                                         const ConvTail& tail) {
  TESSERA_CHECK(conv_gemm_suits(g), "cuda conv gemm: a geometry it does not take (groups {})", g.groups);
  const common::GemmSides sides = common::implicit_gemm_sides(kind, g);
  GemmShape s;
  s.m = sides.m;
  s.n = sides.n;
  s.k = sides.k;
  const char* operands = kind == ConvProduct::forward      ? kForward
                         : kind == ConvProduct::input_grad ? kInputGrad
                                                           : kWeightGrad;
  s.ldd = s.n;
  TESSERA_CHECK(
      kind == ConvProduct::forward || (!tail.bias && !tail.residual && tail.activation == GemmActivation::none),
      "cuda conv gemm: only the forward pass takes a tail");
  s.bias = tail.bias;
  s.residual = tail.residual;
  s.activation = tail.activation;
  const std::string label =
      fmt::format("f32 implicit gemm {} ({}x{}x{})", conv_description(kind, g, tail), s.m, s.n, s.k);
  return std::make_unique<SimtGemm>(ctx, s, conv_geometry_defines(g) + kConvTaps + operands, label, /*gathered_operands=*/true);
}

}  // namespace tessera::backends::cuda
