#pragma once
// The Vulkan backend: whole graphs compiled for any Vulkan 1.1 device through the shared lowering
// (backends/common) with compute shaders: the emitter's GLSL dialect for fused clusters, hand-written
// GLSL for matrix products and copies, compiled at run time by shaderc. Whatever it does not support
// runs on the CPU backend through the graph splitter. Without a loader, a driver or a device the
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

/// The op names of `graph`'s nodes the Vulkan backend does not run itself (they go to the CPU),
/// sorted, each once: what the coverage test and `tessera devices` report.
std::vector<std::string> vulkan_fallback_ops(const ir::Graph& graph);

}  // namespace tessera::backends::vulkan
