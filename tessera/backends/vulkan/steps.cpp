#include "tessera/backends/vulkan/steps.h"

#include <algorithm>

#include <fmt/format.h>

#include "tessera/backends/vulkan/copy_shader.h"
#include "tessera/backends/vulkan/loop_kernels.h"
#include "tessera/core/error.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::backends::vulkan {

namespace {

uint32_t element_bytes(DType dt) { return static_cast<uint32_t>(dtype_size(dt)); }

class KernelStep final : public common::Step {
 public:
  KernelStep(std::shared_ptr<const LoopShader> shader, std::vector<common::Operand> inputs,
             std::vector<common::Operand> outputs, std::vector<uint64_t> input_bytes, std::vector<uint64_t> output_bytes)
      : shader_(std::move(shader)), inputs_(std::move(inputs)), outputs_(std::move(outputs)),
        input_bytes_(std::move(input_bytes)), output_bytes_(std::move(output_bytes)) {}
  void run(const common::RunContext& ctx) const override {
    if (shader_->range == 0) return;
    std::vector<BufferUse> buffers;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      buffers.push_back({ctx.ptr<const std::byte>(inputs_[i]), input_bytes_[i], false, shader_->input_sizes[i]});
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      buffers.push_back({ctx.ptr<const std::byte>(outputs_[i]), output_bytes_[i], true, shader_->output_sizes[i]});
    }
    std::vector<uint32_t> push = {0u, static_cast<uint32_t>(shader_->range)};
    recorder_of(ctx).dispatch(*shader_->pipeline, buffers, std::move(push), 2,
                              groups_for(shader_->range * shader_->threads_per_unit));
  }
  common::StepKind kind() const override { return common::StepKind::kernel; }
  std::string describe() const override {
    return fmt::format("vulkan kernel {} ({} in, {} out, {} units{})", shader_->name, inputs_.size(), outputs_.size(),
                       shader_->range,
                       shader_->threads_per_unit > 1 ? fmt::format(", {} invocations a unit", shader_->threads_per_unit)
                                                     : "");
  }

 private:
  std::shared_ptr<const LoopShader> shader_;
  std::vector<common::Operand> inputs_, outputs_;
  std::vector<uint64_t> input_bytes_, output_bytes_;
};

// Bytes from an operand's start to one past the last element a copy touches on that side.
uint64_t extent_bytes(int64_t offset, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                      size_t element_size) {
  int64_t hi = offset;
  for (size_t a = 0; a < shape.size(); ++a) hi += std::max<int64_t>(0, (shape[a] - 1) * strides[a]);
  return static_cast<uint64_t>(hi + 1) * element_size;
}

class CopyStep final : public common::Step {
 public:
  CopyStep(std::shared_ptr<const Pipeline> pipeline, common::CopyPlan plan, common::Operand src, common::Operand dst,
           std::string what)
      : pipeline_(std::move(pipeline)), plan_(std::move(plan)), src_(src), dst_(dst), what_(std::move(what)) {
    push_.assign(kCopyShiftWord, 0);
    push_[0] = static_cast<uint32_t>(plan_.numel);
    push_[1] = static_cast<uint32_t>(plan_.shape.size());
    push_[2] = static_cast<uint32_t>(plan_.src_offset);
    push_[3] = static_cast<uint32_t>(plan_.dst_offset);
    for (size_t a = 0; a < plan_.shape.size() && a < kMaxCopyRank; ++a) {  // wider copies have theirs compiled in
      push_[4 + a] = static_cast<uint32_t>(plan_.shape[a]);
      push_[4 + kMaxCopyRank + a] = static_cast<uint32_t>(plan_.src_strides[a]);
      push_[4 + 2 * kMaxCopyRank + a] = static_cast<uint32_t>(plan_.dst_strides[a]);
    }
    src_bytes_ = extent_bytes(plan_.src_offset, plan_.shape, plan_.src_strides, plan_.element_size);
    dst_bytes_ = extent_bytes(plan_.dst_offset, plan_.shape, plan_.dst_strides, plan_.element_size);
  }
  void run(const common::RunContext& ctx) const override {
    if (plan_.numel == 0) return;
    const auto es = static_cast<uint32_t>(plan_.element_size);
    std::vector<BufferUse> buffers = {{ctx.ptr<const std::byte>(src_), src_bytes_, false, es},
                                      {ctx.ptr<const std::byte>(dst_), dst_bytes_, true, es}};
    recorder_of(ctx).dispatch(*pipeline_, buffers, push_, kCopyShiftWord, groups_for(plan_.numel));
  }
  common::StepKind kind() const override { return common::StepKind::copy; }
  std::string describe() const override {
    return fmt::format("vulkan copy {} ({} elements of {} bytes, {} axes)", what_, plan_.numel, plan_.element_size,
                       plan_.shape.size());
  }

 private:
  std::shared_ptr<const Pipeline> pipeline_;
  common::CopyPlan plan_;
  common::Operand src_, dst_;
  std::string what_;
  std::vector<uint32_t> push_;
  uint64_t src_bytes_ = 0, dst_bytes_ = 0;
};

class Clusters final : public common::CompiledClusters {
 public:
  Clusters(std::vector<std::shared_ptr<const LoopShader>> shaders, std::vector<lower::Cluster> clusters)
      : shaders_(std::move(shaders)), clusters_(std::move(clusters)) {}
  std::unique_ptr<common::Step> step(size_t c, std::vector<common::Operand> inputs,
                                     std::vector<common::Operand> outputs) const override {
    std::vector<uint64_t> in_bytes, out_bytes;
    for (const ir::Value& v : clusters_.at(c).inputs) in_bytes.push_back(static_cast<uint64_t>(v.type().numel()) * dtype_size(v.dtype()));
    for (const ir::Value& v : clusters_.at(c).outputs) out_bytes.push_back(static_cast<uint64_t>(v.type().numel()) * dtype_size(v.dtype()));
    return std::make_unique<KernelStep>(shaders_.at(c), std::move(inputs), std::move(outputs), std::move(in_bytes),
                                        std::move(out_bytes));
  }

 private:
  std::vector<std::shared_ptr<const LoopShader>> shaders_;
  std::vector<lower::Cluster> clusters_;
};

Context*& context_slot() {
  static thread_local Context* context = nullptr;
  return context;
}

}  // namespace

uint32_t groups_for(int64_t units) {
  return static_cast<uint32_t>(std::clamp<int64_t>((units + 255) / 256, 1, int64_t{1} << 30));
}

std::unique_ptr<common::Step> VulkanStepFactory::copy(const common::CopyPlan& plan, common::Operand src,
                                                      common::Operand dst, std::string what) const {
  if (plan.numel > INT32_MAX) {
    throw common::LoweringFault(nullptr, fmt::format("vulkan: a copy of {} elements (at most 2^31)", plan.numel));
  }
  const auto es = static_cast<uint32_t>(plan.element_size);
  // More axes than the push constants hold: a shader with this copy's axes written in.
  const bool wide = static_cast<int>(plan.shape.size()) > kMaxCopyRank;
  auto pipeline = context_.pipelines().pipeline(
      strided_copy_glsl(es, wide ? &plan : nullptr), 2,
      wide ? fmt::format("copy{}_rank{}", es * 8, plan.shape.size()) : fmt::format("copy{}", es * 8));
  return std::make_unique<CopyStep>(std::move(pipeline), plan, src, dst, std::move(what));
}

std::unique_ptr<common::Step> VulkanStepFactory::fallback(const ir::Node& node, std::vector<common::Operand>,
                                                          std::vector<ir::TensorType>,
                                                          std::vector<common::Operand>) const {
  throw common::LoweringFault(&node, fmt::format("the vulkan backend has no kernel for '{}' (supports() should have "
                                                 "sent it to the CPU)",
                                                 node.op_name()));
}

std::unique_ptr<common::CompiledClusters> VulkanKernelCompiler::compile(const std::vector<lower::Cluster>& clusters) const {
  std::vector<std::shared_ptr<const LoopShader>> shaders;
  for (size_t c = 0; c < clusters.size(); ++c) {
    const lower::Kernel kernel = lower::build_loop_kernel(clusters[c], fmt::format("cluster{}", c));
    auto shader = std::make_shared<LoopShader>();
    shader->name = kernel.name;
    shader->range = kernel.range();
    shader->threads_per_unit = loop_kernel_threads_per_unit(kernel);
    for (const ir::Value& v : clusters[c].inputs) shader->input_sizes.push_back(element_bytes(v.dtype()));
    for (const ir::Value& v : clusters[c].outputs) shader->output_sizes.push_back(element_bytes(v.dtype()));
    const int bindings = static_cast<int>(kernel.input_types.size() + kernel.output_types.size());
    std::string what;
    for (const ir::NodePtr& n : clusters[c].nodes) what += (what.empty() ? "" : "+") + n->op_name();
    if (what.size() > 60) what = what.substr(0, 57) + "...";
    shader->pipeline = context_.pipelines().pipeline(loop_kernel_glsl(kernel), bindings, what);
    shaders.push_back(std::move(shader));
  }
  return std::make_unique<Clusters>(std::move(shaders), clusters);
}

Context& lowering_context() {
  Context* c = context_slot();
  TESSERA_CHECK(c != nullptr, "vulkan: a Vulkan lowering ran outside the Vulkan backend's compile()");
  return *c;
}

void set_lowering_context(Context* context) { context_slot() = context; }

}  // namespace tessera::backends::vulkan
