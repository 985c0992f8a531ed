#pragma once
// The Vulkan backend's side of the shared lowering (backends/common/lower_graph.h): steps that record
// dispatches into the run's command recorder (RunContext::stream is the Recorder), the step factory
// for strided copies, and the kernel compiler that turns a graph's clusters into compute pipelines.
#include <memory>
#include <vector>

#include "tessera/backends/common/lower_graph.h"
#include "tessera/backends/common/lowering.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/recorder.h"

namespace tessera::backends::vulkan {

/// The recorder of the run a step belongs to.
inline Recorder& recorder_of(const common::RunContext& ctx) { return *static_cast<Recorder*>(ctx.stream); }

/// Workgroups of 256 invocations for `units` grid-stride units.
uint32_t groups_for(int64_t units);

/// Copies as strided-copy shaders; no reference-kernel fallback (the splitter gives those nodes to the CPU).
class VulkanStepFactory final : public common::StepFactory {
 public:
  explicit VulkanStepFactory(Context& context) : context_(context) {}
  std::unique_ptr<common::Step> copy(const common::CopyPlan& plan, common::Operand src, common::Operand dst,
                                     std::string what) const override;
  std::unique_ptr<common::Step> fallback(const ir::Node& node, std::vector<common::Operand> inputs,
                                         std::vector<ir::TensorType> input_types,
                                         std::vector<common::Operand> outputs) const override;

 private:
  Context& context_;
};

/// Each cluster as a GLSL compute shader (loop_kernels.h), compiled with shaderc.
class VulkanKernelCompiler final : public common::KernelCompiler {
 public:
  explicit VulkanKernelCompiler(Context& context) : context_(context) {}
  std::unique_ptr<common::CompiledClusters> compile(const std::vector<lower::Cluster>& clusters) const override;

 private:
  Context& context_;
};

/// The library lowerings of the Vulkan backend, by op name: the views, matrix products, and the
/// families of library_ops.h (softmax, indexing, scatters, argmax, padding, Adam).
const common::LoweringTable& vulkan_lowerings();
/// Whether the matmul lowering takes this node (f32, or f16 with 16-bit storage; ranks >= 2).
bool vulkan_matmul_supported(const ir::Node& node, const Features& features);
/// The context the lowering in progress compiles for (library lowerings have no other way to reach it).
Context& lowering_context();
/// Sets (or clears, with null) the context of the lowering in progress on this thread.
void set_lowering_context(Context* context);

}  // namespace tessera::backends::vulkan
