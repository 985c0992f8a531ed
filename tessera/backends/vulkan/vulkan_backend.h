#pragma once
// The Vulkan backend: whole graphs compiled for any Vulkan 1.1 device through the shared lowering
// (backends/common) with compute shaders: the emitter's GLSL dialect for fused clusters, hand-written
// GLSL for matrix products, copies and the library ops (softmax family, indexing and scatters, padding,
// Adam: library_ops.h), compiled at run time by shaderc. What it lacks but can build from those ops
// (convolutions, pooling) is decomposed by the graph splitter; whatever else it does not support runs
// on the CPU backend through the splitter. Without a loader, a driver or a device the
// backend exists but reports why it is unavailable, and compiling for it is a clear error.
#include <string>
#include <vector>

#include "tessera/backends/backend.h"

namespace tessera::backends::vulkan {

/// The backend (made on first use; probes the loader and the device once).
Backend& vulkan_backend();

class Context;
/// The backend's device context (null when the backend is not available): for tests and tools.
Context* vulkan_context();

/// Whether the node runs on Vulkan when a graph is compiled there: supported, or decomposed by the
/// splitter (passes::decompose_where, as on CUDA) into nodes that all are.
bool runs_on_vulkan(const ir::Node& node);

/// The op names of `graph`'s nodes that go to the CPU when it is compiled for Vulkan (runs_on_vulkan
/// false), sorted, each once: what the coverage test reports.
std::vector<std::string> vulkan_fallback_ops(const ir::Graph& graph);

}  // namespace tessera::backends::vulkan
