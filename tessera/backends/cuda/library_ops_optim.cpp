// adam_update on the CUDA backend: every f32 update of a graph that shares hyperparameters and the lr /
// step scalars (cpu::adam_group_key) runs in one launch over all its parameters (up to kTensorsPerLaunch
// a launch, their pointers passed by value), instead of one generated kernel per parameter: the MLP
// step's eight updates were eight launches, most of them over a few thousand elements. lr and step
// stay f64 device scalars read at run time, so one captured step serves every training step; the
// bias corrections are computed in f64 as the decomposition does, the update in f32.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"  // adam_group_key, which is backend-neutral
#include "tessera/backends/cuda/launch.h"
#include "tessera/backends/cuda/steps.h"

namespace tessera::backends::cuda {

namespace {

using common::Lowering;
using common::Operand;

constexpr int kTensorsPerLaunch = 16;
constexpr int kAdamThreads = 256;
constexpr int kPerThread = 4;  // elements per thread, kAdamThreads apart (coalesced)

// The kernel's argument, laid out as TsrAdamList in the source below.
struct AdamTensorArg {
  const float* p;
  const float* g;
  const float* m;
  const float* v;
  float* p_out;
  float* m_out;
  float* v_out;
  long long n;
  long long first_block;
};
struct AdamListArg {
  AdamTensorArg t[kTensorsPerLaunch];
  int count;
};

constexpr const char* kAdamSource = R"CUDA(
struct TsrAdamTensor {
  const float* p; const float* g; const float* m; const float* v;
  float* p_out; float* m_out; float* v_out;
  long long n, first_block;
};
struct TsrAdamList {
  TsrAdamTensor t[16];
  int count;
};
// Blocks [t[k].first_block, t[k + 1].first_block) update tensor k, 1024 elements each. Each element is
// read before it is written by the same thread, so an output may be its own input's memory.
extern "C" __global__ void __launch_bounds__(256) tsr_adam(TsrAdamList list, const double* lr_in, const double* step_in,
                                                           int* status) {
  TSR_GRID_PROLOGUE();
  int k = 0;
  while (k + 1 < list.count && (long long)blockIdx.x >= list.t[k + 1].first_block) ++k;
  const TsrAdamTensor& t = list.t[k];
  const double lr = *lr_in, step = *step_in;
  if (blockIdx.x == 0 && threadIdx.x == 0 && !(step >= 1.0 && floor(step) == step)) atomicOr(status, STATUS_ADAM_STEP);
  const float step_size = (float)(lr / (1.0 - pow(BETA1, step)));
  const float inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(BETA2, step)));
  const float decay = (float)(1.0 - lr * WEIGHT_DECAY);
  const long long base = ((long long)blockIdx.x - t.first_block) * (256LL * 4);
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const long long i = base + u * 256 + threadIdx.x;
    if (i >= t.n) break;
    const float p = t.p[i];
    float g = t.g[i];
#if COUPLED_DECAY
    g += (float)WEIGHT_DECAY * p;
#endif
    const float m = (float)BETA1 * t.m[i] + (float)(1.0 - BETA1) * g;
    const float v = (float)BETA2 * t.v[i] + (float)(1.0 - BETA2) * g * g;
#if DECOUPLED_DECAY
    const float from = p * decay;
#else
    const float from = p;
    (void)decay;
#endif
    t.p_out[i] = from - m / (sqrtf(v) * inv_sqrt_bc2 + (float)EPS) * step_size;
    t.m_out[i] = m;
    t.v_out[i] = v;
  }
}
)CUDA";


class AdamGroupStep final : public common::Step {
 public:
  AdamGroupStep(std::shared_ptr<KernelModule> module, Operand lr, Operand step, std::vector<cpu::AdamTensorOperands> tensors,
                std::string what)
      : module_(std::move(module)),
        kernel_(module_->kernel("tsr_adam")),
        lr_(lr),
        step_(step),
        tensors_(std::move(tensors)),
        what_(std::move(what)) {}

  void run(const common::RunContext& ctx) const override {
    const double* lr = ctx.ptr<const double>(lr_);
    const double* step = ctx.ptr<const double>(step_);
    void* status = index_error_flag(ctx);
    for (size_t from = 0; from < tensors_.size(); from += kTensorsPerLaunch) {
      AdamListArg list{};
      long long blocks = 0;
      const size_t to = std::min(tensors_.size(), from + kTensorsPerLaunch);
      for (size_t i = from; i < to; ++i) {
        const cpu::AdamTensorOperands& o = tensors_[i];
        list.t[i - from] = {ctx.ptr<const float>(o.p),     ctx.ptr<const float>(o.g),     ctx.ptr<const float>(o.m),
                            ctx.ptr<const float>(o.v),     ctx.ptr<float>(o.p_out),       ctx.ptr<float>(o.m_out),
                            ctx.ptr<float>(o.v_out),       static_cast<long long>(o.n), blocks};
        blocks += (o.n + kAdamThreads * kPerThread - 1) / (kAdamThreads * kPerThread);
      }
      list.count = static_cast<int>(to - from);
      void* params[] = {&list, &lr, &step, &status};
      launch_kernel(reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(blocks)), dim3(kAdamThreads), params,
                    0, stream_of(ctx), "cudaLaunchKernel (adam)");
    }
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return "cuda " + what_; }

 private:
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_;
  Operand lr_, step_;
  std::vector<cpu::AdamTensorOperands> tensors_;
  std::string what_;
};

bool claim_adam(const ir::Node& node) {
  if (node.inputs().size() != 6 || node.num_outputs() != 3 || node.input(0).type().numel() == 0) return false;
  for (size_t i = 0; i < 4; ++i) {
    if (node.input(i).dtype() != DType::f32) return false;
  }
  for (size_t i = 4; i < 6; ++i) {
    if (node.input(i).dtype() != DType::f64 || node.input(i).rank() != 0) return false;
  }
  return true;
}

// A double literal that reads back as exactly v.
std::string literal(double v) { return fmt::format("{:.17g}", v); }

void lower_adam_group(Lowering& L, const std::vector<ir::NodePtr>& nodes) {
  Context& ctx = lowering_context();
  const ir::Attrs& a = nodes.front()->attrs();
  const double wd = a.get_float("weight_decay");
  const bool decoupled = a.get_bool("decoupled");
  const std::string defines =
      fmt::format("#define STATUS_ADAM_STEP {}\n#define BETA1 {}\n#define BETA2 {}\n#define EPS {}\n#define WEIGHT_DECAY {}\n#define COUPLED_DECAY {}\n"
                  "#define DECOUPLED_DECAY {}\n",
                  kStatusAdamStep, literal(a.get_float("beta1")), literal(a.get_float("beta2")), literal(a.get_float("eps")),
                  literal(wd), !decoupled && wd != 0.0 ? 1 : 0, decoupled && wd != 0.0 ? 1 : 0);
  cpu::AdamGroupOperands group = cpu::bind_adam_group(L, nodes);
  int64_t total = 0;
  for (const cpu::AdamTensorOperands& o : group.tensors) total += o.n;
  const std::string what = fmt::format("{} x{} tensors, {} elements", decoupled ? "adamw" : "adam", nodes.size(), total);
  L.emit(std::make_unique<AdamGroupStep>(ctx.compiler().module(defines + kAdamSource, what + " kernel"),
                                         L.operand(group.lr), L.operand(group.step), std::move(group.tensors), what),
         group.reads, group.writes);
}

}  // namespace

void register_optim_lowerings(common::LoweringTable& table) {
  // Only as groups (lower_node never sees a claimed update).
  table["adam_update"] = {nullptr, claim_adam, true, cpu::adam_group_key, lower_adam_group};
}

}  // namespace tessera::backends::cuda
