#include "tessera/backends/cuda/steps.h"

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::backends::cuda {

namespace {

class KernelStep final : public common::Step {
 public:
  KernelStep(std::shared_ptr<const LoopKernel> kernel, std::vector<common::Operand> inputs,
             std::vector<common::Operand> outputs)
      : kernel_(std::move(kernel)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  void run(const common::RunContext& ctx) const override {
    const void* in[kMaxKernelBuffers];
    void* out[kMaxKernelBuffers];
    for (size_t i = 0; i < inputs_.size(); ++i) in[i] = ctx.ptr<const std::byte>(inputs_[i]);
    for (size_t i = 0; i < outputs_.size(); ++i) out[i] = ctx.ptr<std::byte>(outputs_[i]);
    kernel_->launch(in, out, stream_of(ctx));
  }
  common::StepKind kind() const override { return common::StepKind::kernel; }
  std::string describe() const override {
    return fmt::format("cuda kernel {} ({} in, {} out, {} units)", kernel_->name(), inputs_.size(), outputs_.size(),
                       kernel_->range());
  }

 private:
  std::shared_ptr<const LoopKernel> kernel_;
  std::vector<common::Operand> inputs_, outputs_;
};

class CopyStep final : public common::Step {
 public:
  CopyStep(const CopyKernels& kernels, StridedCopy copy, common::Operand src, common::Operand dst, std::string what)
      : kernels_(kernels), copy_(std::move(copy)), src_(src), dst_(dst), what_(std::move(what)) {}
  void run(const common::RunContext& ctx) const override {
    kernels_.launch(copy_, ctx.ptr<const std::byte>(src_), ctx.ptr<std::byte>(dst_), stream_of(ctx));
  }
  common::StepKind kind() const override { return common::StepKind::copy; }
  std::string describe() const override {
    return fmt::format("cuda copy {} ({} elements of {} bytes, {} axes)", what_, copy_.numel, copy_.element_size,
                       copy_.shape.size());
  }

 private:
  const CopyKernels& kernels_;
  StridedCopy copy_;
  common::Operand src_, dst_;
  std::string what_;
};

class Clusters final : public common::CompiledClusters {
 public:
  explicit Clusters(std::vector<std::shared_ptr<const LoopKernel>> kernels) : kernels_(std::move(kernels)) {}
  std::unique_ptr<common::Step> step(size_t c, std::vector<common::Operand> inputs,
                                     std::vector<common::Operand> outputs) const override {
    return std::make_unique<KernelStep>(kernels_.at(c), std::move(inputs), std::move(outputs));
  }

 private:
  std::vector<std::shared_ptr<const LoopKernel>> kernels_;
};

Context*& context_slot() {
  static thread_local Context* context = nullptr;
  return context;
}

}  // namespace

std::unique_ptr<common::Step> CudaStepFactory::copy(const common::CopyPlan& plan, common::Operand src,
                                                    common::Operand dst, std::string what) const {
  StridedCopy c;
  c.shape = plan.shape;
  c.src_strides = plan.src_strides;
  c.dst_strides = plan.dst_strides;
  c.src_offset = plan.src_offset;
  c.dst_offset = plan.dst_offset;
  c.numel = plan.numel;
  c.element_size = plan.element_size;
  return std::make_unique<CopyStep>(context_.copies(), std::move(c), src, dst, std::move(what));
}

std::unique_ptr<common::Step> CudaStepFactory::fallback(const ir::Node& node, std::vector<common::Operand>,
                                                        std::vector<ir::TensorType>, std::vector<common::Operand>) const {
  throw common::LoweringFault(&node, fmt::format("the cuda backend has no kernel for '{}' (supports() should have "
                                                 "sent it to the CPU)",
                                                 node.op_name()));
}

std::unique_ptr<common::CompiledClusters> CudaKernelCompiler::compile(const std::vector<lower::Cluster>& clusters) const {
  std::vector<lower::Kernel> kernels;
  kernels.reserve(clusters.size());
  for (size_t c = 0; c < clusters.size(); ++c) {
    kernels.push_back(lower::build_loop_kernel(clusters[c], fmt::format("cluster{}", c)));
  }
  return std::make_unique<Clusters>(compile_loop_kernels(kernels, context_.compiler(), context_.multiprocessors()));
}

Context& lowering_context() {
  Context* c = context_slot();
  TESSERA_CHECK(c != nullptr, "cuda: a CUDA lowering ran outside the CUDA backend's compile()");
  return *c;
}

void set_lowering_context(Context* context) { context_slot() = context; }

}  // namespace tessera::backends::cuda
