#pragma once
// The CUDA backend: whole graphs compiled for an NVIDIA GPU through the shared lowering
// (backends/common) with generated kernels from NVRTC and cuBLASLt products; whatever it does not
// support runs on the CPU backend through the graph splitter. On a machine without a GPU or driver the
// backend exists but reports why it is unavailable, and compiling for it is a clear error.
#include "tessera/backends/backend.h"

namespace tessera::backends::cuda {

Backend& cuda_backend();

}  // namespace tessera::backends::cuda
