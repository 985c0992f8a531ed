#pragma once
// Launches of the backend's own kernels, with programmatic dependent launch (PDL, sm_90 and newer):
// a kernel may start launching while the one before it drains, instead of after it. That is safe
// because every kernel of ours begins with TSR_GRID_PROLOGUE() (nvrtc_compiler.h prepends its
// definition; NvrtcCompiler refuses a module with a __global__ that lacks it): it waits until the grids
// before it have finished and their writes are visible, then lets the next grid launch. A decode step
// is ~300 small dependent launches, so the launch latency each one hides is most of a small kernel.
// TESSERA_CUDA_PDL=0 launches them one after another as before (for measuring it).
#include <cuda_runtime.h>

#include <cstddef>

namespace tessera::backends::cuda {

// The definition of TSR_GRID_PROLOGUE() every NVRTC module gets (a no-op before sm_90).
extern const char* const kGridPrologueSource;

// Whether launches use PDL: on for devices of compute capability 9.0 and newer unless TESSERA_CUDA_PDL=0.
bool pdl_enabled(int compute_capability);
void set_pdl_capability(int compute_capability);  // the current device's, set when its context is made

// cudaLaunchKernel with the PDL attribute when enabled; `what` names the kernel if the launch fails.
void launch_kernel(const void* kernel, dim3 grid, dim3 block, void** params, size_t shared_bytes, cudaStream_t stream,
                   const char* what);

}  // namespace tessera::backends::cuda
