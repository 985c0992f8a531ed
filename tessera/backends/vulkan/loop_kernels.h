#pragma once
// Generated kernels on Vulkan: each fused cluster's loop kernel (tessera/lower) written in the
// emitter's GLSL dialect as one compute shader. Buffers are std430 storage blocks at bindings 0..N-1
// (inputs, then outputs); push constants carry the range [begin, end) and, per buffer, the elements
// between its descriptor's aligned start and the operand's first element, so an operand may start at
// any element of the memory plan's arena.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/vulkan/pipelines.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::backends::vulkan {

/// The most buffers a generated shader may bind (push constants hold 2 + one shift per buffer).
inline constexpr int kMaxShaderBuffers = static_cast<int>(kPushBytes / 4) - 2;

/// The GLSL of one loop kernel as the backend runs it (also for tests and dumps).
std::string loop_kernel_glsl(const lower::Kernel& kernel);

/// Invocations that share one range unit of the kernel (a reduction's output: a workgroup or a group
/// of its invocations, codegen/thread_mapping; else 1), for sizing the dispatch.
int loop_kernel_threads_per_unit(const lower::Kernel& kernel);

/// One compiled loop kernel.
struct LoopShader {
  std::shared_ptr<const Pipeline> pipeline;
  std::string name;
  std::vector<uint32_t> input_sizes, output_sizes;  // element bytes per buffer
  int64_t range = 0;
  int threads_per_unit = 1;  // loop_kernel_threads_per_unit
};

}  // namespace tessera::backends::vulkan
