#include "tessera/backends/cuda/conv_im2col.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "tessera/backends/cuda/grid.h"
#include "tessera/backends/cuda/launch.h"
#include "tessera/backends/cuda/simt_gemm.h"

namespace tessera::backends::cuda {

namespace {

// Four grid-stride kernels over the geometry's constants (conv_gemm.h's defines, plus CV_N and the tail's
// activation code CV_ACT for simt_gemm.h's tsr_activation), each with the same parameters (unused ones are null): the columns, the two reorderings between
// NCHW and channel-major order, and the gather that adds the columns' taps back into an input gradient.
constexpr const char* kIm2colKernels = R"(
#define CV_J (CV_N * CV_P)
#define TSR_LOOP(total) \
  for (long long i_ = (long long)blockIdx.x * blockDim.x + threadIdx.x; i_ < (long long)(total); \
       i_ += (long long)gridDim.x * blockDim.x)

// C [Cin*kh*kw, N*OH*OW] from X: a thread per (input channel, output position) writes that column's
// kh*kw taps (neighbouring threads, neighbouring columns: the stores coalesce).
extern "C" __global__ void __launch_bounds__(256) tsr_im2col(const float* x, float* c, const float*, const float*) {
  TSR_GRID_PROLOGUE();
  TSR_LOOP((long long)CV_CIN * CV_J) {
    const unsigned i = (unsigned)i_, ci = i / CV_J, j = i - ci * CV_J;
    const unsigned n = j / CV_P, p = j - n * CV_P, oh = p / CV_OW, ow = p - oh * CV_OW;
    const float* plane = x + (n * CV_CIN + ci) * CV_HW;
    float* column = c + ci * CV_KHW * CV_J + j;
#pragma unroll
    for (unsigned kh = 0; kh < CV_KH; ++kh) {
      const int ih = (int)(oh * CV_SH + kh * CV_DH) - CV_PH;
#pragma unroll
      for (unsigned kw = 0; kw < CV_KW; ++kw) {
        const int iw = (int)(ow * CV_SW + kw * CV_DW) - CV_PW;
        column[(kh * CV_KW + kw) * CV_J] = (unsigned)ih < CV_H && (unsigned)iw < CV_W ? plane[ih * (int)CV_W + iw] : 0.f;
      }
    }
  }
}

// T [Cout, N*OH*OW] from an NCHW tensor of Cout channels (the output gradient).
extern "C" __global__ void __launch_bounds__(256) tsr_to_channel_major(const float* y, float* t, const float*,
                                                                       const float*) {
  TSR_GRID_PROLOGUE();
  TSR_LOOP((long long)CV_COUT * CV_J) {
    const unsigned i = (unsigned)i_, co = i / CV_J, j = i - co * CV_J, n = j / CV_P;
    t[i] = y[(n * CV_COUT + co) * CV_P + (j - n * CV_P)];
  }
}

// Y (NCHW) = activation(T + bias + residual), as cuBLASLt's epilogues order it.
extern "C" __global__ void __launch_bounds__(256) tsr_from_channel_major(const float* t, float* y, const float* bias,
                                                                         const float* residual) {
  TSR_GRID_PROLOGUE();
  TSR_LOOP((long long)CV_N * CV_COUT * CV_P) {
    const unsigned i = (unsigned)i_, n = i / (CV_COUT * CV_P), r = i - n * (CV_COUT * CV_P), co = r / CV_P;
    float v = t[co * CV_J + n * CV_P + (r - co * CV_P)];
    if (bias != nullptr) v += bias[co];
    if (residual != nullptr) v += residual[i];
    y[i] = tsr_activation(v, CV_ACT);
  }
}

// dX (NCHW) [n, ci, q] = the sum over taps t of C [ci*kh*kw + t, output position reading q at t], in tap
// order (deterministic, no atomics).
extern "C" __global__ void __launch_bounds__(256) tsr_col2im(const float* c, float* dx, const float*, const float*) {
  TSR_GRID_PROLOGUE();
  TSR_LOOP((long long)CV_N * CV_CIN * CV_HW) {
    const unsigned i = (unsigned)i_, n = i / (CV_CIN * CV_HW), r = i - n * (CV_CIN * CV_HW), ci = r / CV_HW;
    const unsigned q = r - ci * CV_HW, ih = q / CV_W, iw = q - ih * CV_W;
    float s = 0.f;
#pragma unroll
    for (unsigned kh = 0; kh < CV_KH; ++kh) {
      const int th = (int)(ih + CV_PH) - (int)(kh * CV_DH);
      if (th < 0 || (unsigned)th % CV_SH != 0 || (unsigned)th / CV_SH >= CV_OH) continue;
#pragma unroll
      for (unsigned kw = 0; kw < CV_KW; ++kw) {
        const int tw = (int)(iw + CV_PW) - (int)(kw * CV_DW);
        if (tw < 0 || (unsigned)tw % CV_SW != 0 || (unsigned)tw / CV_SW >= CV_OW) continue;
        const unsigned k = ci * CV_KHW + kh * CV_KW + kw, p = ((unsigned)th / CV_SH) * CV_OW + (unsigned)tw / CV_SW;
        s += c[k * CV_J + n * CV_P + p];
      }
    }
    dx[i] = s;
  }
}
)";

constexpr int64_t kColumnsLimit = int64_t{256} << 20;  // bytes of C beyond which the implicit GEMM stays

std::atomic<int> g_mode{-1};

// What the environment says of this product, or nothing (the rule decides).
std::optional<bool> environment_allows(ConvProduct kind) {
  const char* env = std::getenv("TESSERA_CUDA_CONV_IM2COL");
  if (env == nullptr || *env == '\0') return std::nullopt;
  const std::string v = env;
  if (v == "0" || v == "1") return v == "1";
  const std::string_view name = kind == ConvProduct::forward      ? "forward"
                                : kind == ConvProduct::input_grad ? "input_grad"
                                                                  : "weight_grad";
  std::string list = "+" + v + "+";  // '+' or ',' between names (cuda_suite.sh's A/B joins variables with ',')
  std::replace(list.begin(), list.end(), ',', '+');
  return list.find(fmt::format("+{}+", name)) != std::string::npos;
}

// m, n, k of the explicit form's product.
void product_sides(ConvProduct kind, const kernels::Conv2dGeometry& g, int64_t& m, int64_t& n, int64_t& k) {
  const int64_t taps = g.in_channels * g.kernel_h * g.kernel_w, columns = g.batch * g.out_h * g.out_w;
  switch (kind) {
    case ConvProduct::forward:
      m = g.out_channels, n = columns, k = taps;
      break;
    case ConvProduct::input_grad:
      m = taps, n = columns, k = g.out_channels;
      break;
    case ConvProduct::weight_grad:
      m = g.out_channels, n = taps, k = columns;
      break;
  }
}

int alignment(int64_t row_elements, bool base_aligned) { return base_aligned && row_elements % 4 == 0 ? 16 : 4; }

// Bytes of the columns C [Cin*kh*kw, N*OH*OW].
int64_t columns_bytes_of(const kernels::Conv2dGeometry& g) {
  return 4 * g.in_channels * g.kernel_h * g.kernel_w * g.batch * g.out_h * g.out_w;
}

}  // namespace

void set_conv_im2col(int mode) { g_mode = mode; }

bool im2col_conv_suits(ConvProduct kind, const kernels::Conv2dGeometry& g) {
  if (!conv_gemm_suits(g)) return false;
  int64_t m = 0, n = 0, k = 0;
  product_sides(kind, g, m, n, k);
  if (columns_bytes_of(g) > kColumnsLimit) return false;
  const int mode = g_mode.load();
  if (mode >= 0) return mode == 1;
  if (const std::optional<bool> named = environment_allows(kind)) return *named;
  // The weight gradient stays implicit: explicit, its im2col and reordering cost what the product saves
  // (83 against 82 us on the CNN's second convolution).
  return kind != ConvProduct::weight_grad && m >= 32 && n >= 32 && k >= 32;
}

Im2colConv::Im2colConv(Context& ctx, ConvProduct kind, const kernels::Conv2dGeometry& g, const ConvTail& tail,
                       bool a_aligned, bool d_aligned)
    : kind_(kind), g_(g), tail_(tail), multiprocessors_(ctx.multiprocessors()) {
  TESSERA_CHECK(kind == ConvProduct::forward || (!tail.bias && !tail.residual && tail.activation == GemmActivation::none),
                "cuda im2col conv: only the forward pass takes a tail");
  const std::string source = conv_geometry_defines(g) +
                             fmt::format("#define CV_N {}u\n#define CV_ACT {}\n", g.batch, activation_code(tail.activation)) +
                             kConvTaps + kTailActivation + kIm2colKernels;
  module_ = ctx.compiler().module(source, "im2col convolution kernels");
  const int64_t taps = g.in_channels * g.kernel_h * g.kernel_w, columns = g.batch * g.out_h * g.out_w;
  GemmShape s;
  product_sides(kind, g, s.m, s.n, s.k);
  // The scratch matrices' rows are `columns` long and start 16-byte aligned (arena memory).
  const int scratch = alignment(columns, true);
  switch (kind) {
    case ConvProduct::forward:  // T = W [Cout, taps] @ C [taps, columns]
      im2col_ = module_->kernel("tsr_im2col");
      finish_ = module_->kernel("tsr_from_channel_major");
      s.lda = taps, s.ldb = columns, s.ldd = columns;
      s.align_a = alignment(taps, a_aligned), s.align_b = scratch, s.align_d = scratch;
      break;
    case ConvProduct::input_grad:  // C = W^T (W stored [Cout, taps]) @ T [Cout, columns]
      to_channel_major_ = module_->kernel("tsr_to_channel_major");
      finish_ = module_->kernel("tsr_col2im");
      s.a_transposed = true;
      s.lda = taps, s.ldb = columns, s.ldd = columns;
      s.align_a = alignment(taps, a_aligned), s.align_b = scratch, s.align_d = scratch;
      break;
    case ConvProduct::weight_grad:  // dW = T [Cout, columns] @ C^T (C stored [taps, columns])
      im2col_ = module_->kernel("tsr_im2col");
      to_channel_major_ = module_->kernel("tsr_to_channel_major");
      s.b_transposed = true;
      s.lda = columns, s.ldb = columns, s.ldd = taps;
      s.align_a = scratch, s.align_b = scratch, s.align_d = alignment(taps, d_aligned);
      break;
  }
  product_ = std::make_unique<GemmPlan>(ctx.blas(), s, ctx.workspace(), ctx.workspace_bytes());
  label_ = fmt::format("f32 im2col {} ({}x{}x{} {})", conv_description(kind, g, tail), s.m, s.n, s.k,
                       product_->describe());
}

Im2colConv::~Im2colConv() = default;

int64_t Im2colConv::columns_bytes() const { return columns_bytes_of(g_); }

int64_t Im2colConv::transposed_bytes() const { return 4 * g_.out_channels * g_.batch * g_.out_h * g_.out_w; }

void Im2colConv::run(const void* a, const void* b, const void* bias, const void* residual, void* d, void* columns,
                     void* transposed, cudaStream_t stream) const {
  auto launch = [&](cudaKernel_t kernel, int64_t threads, const void* in, void* out, const void* bias_in,
                    const void* residual_in) {
    void* params[] = {&in, &out, &bias_in, &residual_in};
    launch_kernel(reinterpret_cast<const void*>(kernel), dim3(grid_stride_blocks(threads, multiprocessors_)), dim3(256),
                  params, 0, stream, "cudaLaunchKernel (im2col convolution)");
  };
  const int64_t column_threads = g_.in_channels * g_.batch * g_.out_h * g_.out_w, output = transposed_bytes() / 4;
  const int64_t input = g_.batch * g_.in_channels * g_.in_h * g_.in_w;
  switch (kind_) {
    case ConvProduct::forward:  // a = W, b = X
      launch(im2col_, column_threads, b, columns, nullptr, nullptr);
      product_->run(a, columns, nullptr, nullptr, transposed, stream);
      launch(finish_, output, transposed, d, tail_.bias ? bias : nullptr, tail_.residual ? residual : nullptr);
      break;
    case ConvProduct::input_grad:  // a = W, b = dY
      launch(to_channel_major_, output, b, transposed, nullptr, nullptr);
      product_->run(a, transposed, nullptr, nullptr, columns, stream);
      launch(finish_, input, columns, d, nullptr, nullptr);
      break;
    case ConvProduct::weight_grad:  // a = dY, b = X
      launch(im2col_, column_threads, b, columns, nullptr, nullptr);
      launch(to_channel_major_, output, a, transposed, nullptr, nullptr);
      product_->run(transposed, columns, nullptr, nullptr, d, stream);
      break;
  }
}

std::string Im2colConv::describe() const { return label_; }

}  // namespace tessera::backends::cuda
