// 2-D max pooling and its gradient on the CUDA backend, one thread per output (pool) or per input
// element (gradient), with the window geometry compiled in as constants. The decomposition
// (ops/pool_decompose.cpp) materialises every tap of every window and scatters the gradient back;
// here the gradient is a gather: each input element visits the few windows that can read it and adds
// the output gradient of those whose first maximum it is (in window order: deterministic, no atomics).
// f32 over any leading axes; other dtypes and spatial ranks still decompose.
#include <fmt/format.h>

#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/cuda/launch.h"
#include "tessera/backends/cuda/steps.h"

namespace tessera::backends::cuda {

namespace {

using common::Lowering;
using common::Operand;

// The window's first maximum in tap order (NaN wins, as in max), as an index into the plane, or -1
// when no tap lies inside the input. conv_pool.cpp's reference picks the same one.
constexpr const char* kPoolSource = R"(
__device__ __forceinline__ int tsr_window_argmax(const float* plane, int oh, int ow) {
  int best_at = -1;
  float best = 0.f;
#pragma unroll
  for (int kh = 0; kh < PL_KH; ++kh) {
    const int ih = oh * PL_SH - PL_PH + kh * PL_DH;
    if (ih < 0 || ih >= PL_H) continue;
#pragma unroll
    for (int kw = 0; kw < PL_KW; ++kw) {
      const int iw = ow * PL_SW - PL_PW + kw * PL_DW;
      if (iw < 0 || iw >= PL_W) continue;
      const float v = plane[ih * PL_W + iw];
      if (best_at < 0 || v > best || (isnan(v) && !isnan(best))) {
        best = v;
        best_at = ih * PL_W + iw;
      }
    }
  }
  return best_at;
}

extern "C" __global__ void __launch_bounds__(256) tsr_max_pool(const float* x, float* y, long long planes) {
  TSR_GRID_PROLOGUE();
  const long long total = planes * (PL_OH * PL_OW);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const long long plane = i / (PL_OH * PL_OW);
    const int o = (int)(i - plane * (PL_OH * PL_OW)), oh = o / PL_OW, ow = o - oh * PL_OW;
    const float* xp = x + plane * (PL_H * PL_W);
    const int at = tsr_window_argmax(xp, oh, ow);
    y[i] = at < 0 ? -__int_as_float(0x7f800000) : xp[at];
  }
}

extern "C" __global__ void __launch_bounds__(256) tsr_max_pool_grad(const float* x, const float* g, float* dx,
                                                                    long long planes) {
  TSR_GRID_PROLOGUE();
  const long long total = planes * (PL_H * PL_W);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const long long plane = i / (PL_H * PL_W);
    const int q = (int)(i - plane * (PL_H * PL_W)), ih = q / PL_W, iw = q - ih * PL_W;
    const float* xp = x + plane * (PL_H * PL_W);
    const float* gp = g + plane * (PL_OH * PL_OW);
    float acc = 0.f;
#pragma unroll
    for (int kh = 0; kh < PL_KH; ++kh) {
      const int th = ih + PL_PH - kh * PL_DH;
      if (th < 0 || th % PL_SH != 0 || th / PL_SH >= PL_OH) continue;
#pragma unroll
      for (int kw = 0; kw < PL_KW; ++kw) {
        const int tw = iw + PL_PW - kw * PL_DW;
        if (tw < 0 || tw % PL_SW != 0 || tw / PL_SW >= PL_OW) continue;
        const int oh = th / PL_SH, ow = tw / PL_SW;
        if (tsr_window_argmax(xp, oh, ow) == q) acc += gp[oh * PL_OW + ow];
      }
    }
    dx[i] = acc;
  }
}

// The gradient when the windows tile the input (kernel = stride, no dilation or padding): one thread per
// window writes its whole cell, the output gradient at the first maximum and zeros elsewhere, reading
// each input once (the gather above reads a window once per element of it). The last row and column
// of cells also zero what no window covers.
extern "C" __global__ void __launch_bounds__(256) tsr_max_pool_grad_cells(const float* x, const float* g, float* dx,
                                                                          long long planes) {
  TSR_GRID_PROLOGUE();
  const long long total = planes * (PL_OH * PL_OW);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const long long plane = i / (PL_OH * PL_OW);
    const int o = (int)(i - plane * (PL_OH * PL_OW)), oh = o / PL_OW, ow = o - oh * PL_OW;
    const float* xp = x + plane * (PL_H * PL_W);
    float* dp = dx + plane * (PL_H * PL_W);
    const int at = tsr_window_argmax(xp, oh, ow);
    const float gv = g[i];
    const int h1 = oh == PL_OH - 1 ? PL_H : (oh + 1) * PL_SH, w1 = ow == PL_OW - 1 ? PL_W : (ow + 1) * PL_SW;
    for (int ih = oh * PL_SH; ih < h1; ++ih) {
      for (int iw = ow * PL_SW; iw < w1; ++iw) dp[ih * PL_W + iw] = ih * PL_W + iw == at ? gv : 0.f;
    }
  }
}
)";

class PoolStep final : public common::Step {
 public:
  PoolStep(std::shared_ptr<KernelModule> module, const char* kernel, std::vector<Operand> operands, int64_t planes,
           int64_t threads, std::string what)
      : module_(std::move(module)), kernel_(module_->kernel(kernel)), operands_(std::move(operands)), planes_(planes),
        grid_(grid_stride_blocks(threads, lowering_context().multiprocessors())), what_(std::move(what)) {}
  void run(const common::RunContext& ctx) const override {
    std::vector<void*> ptrs;
    for (const Operand& o : operands_) ptrs.push_back(ctx.ptr<std::byte>(o));
    long long planes = planes_;
    std::vector<void*> params;
    for (void*& p : ptrs) params.push_back(&p);
    params.push_back(&planes);
    launch_kernel(reinterpret_cast<const void*>(kernel_), dim3(grid_), dim3(256), params.data(), 0, stream_of(ctx),
                  "cudaLaunchKernel (max pool)");
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return "cuda " + what_; }

 private:
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_;
  std::vector<Operand> operands_;
  long long planes_;
  unsigned grid_;
  std::string what_;
};

bool claim_pool(const ir::Node& node) { return common::f32_max_pool2d_geometry(node).has_value(); }

bool lower_pool(Lowering& L, const ir::NodePtr& node) {
  const std::optional<kernels::Pool2dGeometry> g = common::f32_max_pool2d_geometry(*node);
  if (!g) return false;
  const bool grad = node->op_name() == "max_pool_grad";
  std::vector<int32_t> reads;
  for (const ir::Value& v : node->inputs()) reads.push_back(L.packed(L.value(v)));
  const int32_t out = L.produce(ir::Value(node, 0));
  std::vector<Operand> operands;
  for (int32_t r : reads) operands.push_back(L.operand(r));
  operands.push_back(L.operand(out));
  const std::string defines = common::pool_geometry_defines(*g);
  const std::string what =
      fmt::format("{} f32 {} planes {}x{} -> {}x{} k{}x{} s{}x{}", node->op_name(), g->planes, g->in_h, g->in_w,
                  g->out_h, g->out_w, g->kernel_h, g->kernel_w, g->stride_h, g->stride_w);
  Context& ctx = lowering_context();
  // Windows that tile the input (as every 2x2 pool of stride 2) take the per-window gradient.
  const bool cells = grad && common::pool_windows_tile(*g);
  const int64_t threads = g->planes * (grad && !cells ? g->in_h * g->in_w : g->out_h * g->out_w);
  const char* kernel = !grad ? "tsr_max_pool" : cells ? "tsr_max_pool_grad_cells" : "tsr_max_pool_grad";
  L.emit(std::make_unique<PoolStep>(ctx.compiler().module(defines + kPoolSource, "max pool kernels"), kernel,
                                    std::move(operands), g->planes, threads, what + (cells ? " (cells)" : "")),
         reads, {out});
  return true;
}

}  // namespace

void register_pool_lowerings(common::LoweringTable& table) {
  table["max_pool"] = {lower_pool, claim_pool, true};
  table["max_pool_grad"] = {lower_pool, claim_pool, true};
}

}  // namespace tessera::backends::cuda
