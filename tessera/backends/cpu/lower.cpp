// The CPU's parts of the shared lowering: its table of library lowerings, and generated loop kernels
// (the C JIT, jit.h) run as steps on the host thread pool.
#include "tessera/backends/cpu/lower.h"

#include <fmt/format.h>

#include "tessera/backends/common/lower_graph.h"
#include "tessera/backends/cpu/fallback.h"
#include "tessera/backends/cpu/jit.h"
#include "tessera/backends/cpu/library_ops.h"

namespace tessera::backends::cpu {

const LoweringTable& library_lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
    register_view_lowerings(t);
    register_matmul_lowerings(t);
    register_conv_lowerings(t);
    register_pool_lowerings(t);
    register_softmax_lowerings(t);
    register_quant_lowerings(t);
    register_reduce_lowerings(t);
    register_index_lowerings(t);
    register_attention_lowerings(t);
    register_optim_lowerings(t);
    return t;
  }();
  return table;
}

namespace {

class LoopKernelStep final : public Step {
 public:
  LoopKernelStep(std::shared_ptr<const LoopKernel> kernel, std::vector<Operand> inputs, std::vector<Operand> outputs)
      : kernel_(std::move(kernel)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  void run(const RunContext& ctx) const override {
    for (size_t i = 0; i < inputs_.size(); ++i) ctx.kernel_inputs[i] = ctx.ptr<const std::byte>(inputs_[i]);
    for (size_t i = 0; i < outputs_.size(); ++i) ctx.kernel_outputs[i] = ctx.ptr<std::byte>(outputs_[i]);
    kernel_->run(ctx.kernel_inputs, ctx.kernel_outputs, *ctx.pool);
  }
  StepKind kind() const override { return StepKind::kernel; }
  std::string describe() const override {
    return fmt::format("kernel {} ({} in, {} out)", kernel_->name(), inputs_.size(), outputs_.size());
  }

 private:
  std::shared_ptr<const LoopKernel> kernel_;
  std::vector<Operand> inputs_, outputs_;
};

class JitClusters final : public common::CompiledClusters {
 public:
  explicit JitClusters(std::vector<std::shared_ptr<const LoopKernel>> kernels) : kernels_(std::move(kernels)) {}
  std::unique_ptr<Step> step(size_t c, std::vector<Operand> inputs, std::vector<Operand> outputs) const override {
    return std::make_unique<LoopKernelStep>(kernels_[c], std::move(inputs), std::move(outputs));
  }

 private:
  std::vector<std::shared_ptr<const LoopKernel>> kernels_;
};

class CJit final : public common::KernelCompiler {
 public:
  std::unique_ptr<common::CompiledClusters> compile(const std::vector<lower::Cluster>& clusters) const override {
    return std::make_unique<JitClusters>(compile_clusters(clusters));
  }
};

}  // namespace

std::unique_ptr<common::Program> lower_graph(const ir::Graph& graph, const LowerOptions& options,
                                             const std::unordered_map<const ir::Node*, int32_t>& original_constants) {
  static const CJit jit;
  common::BackendLowering backend;
  backend.name = "cpu";
  backend.table = &library_lowerings();
  backend.steps = &host_steps();
  backend.kernels = options.jit == JitMode::off ? nullptr : &jit;
  common::LowerOptions lower;
  lower.fusion = options.fusion;
  // Chained, softmax computes exp(x - max) twice, once in the sum's loop, where the C compiler leaves
  // it a scalar libm call: measured 0.69x of the unchained two kernels (bench_rows, 512 x 2048 rows).
  lower.chain_reductions = false;
  lower.min_generated_elements = options.jit == JitMode::automatic ? options.jit_min_elements : 0;
  return common::lower_graph(graph, backend, lower, original_constants);
}

}  // namespace tessera::backends::cpu
