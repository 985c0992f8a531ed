#include "tessera/backends/cuda/launch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tessera/backends/cuda/cuda_check.h"

namespace tessera::backends::cuda {

const char* const kGridPrologueSource = R"CUDA(
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TSR_GRID_PROLOGUE() asm volatile("griddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;" ::: "memory")
#else
#define TSR_GRID_PROLOGUE() do { } while (0)
#endif
)CUDA";

namespace {

std::atomic<int> current_capability{0};

bool pdl_switched_off() {
  static const bool off = [] {
    const char* env = std::getenv("TESSERA_CUDA_PDL");
    return env != nullptr && std::strcmp(env, "0") == 0;
  }();
  return off;
}

}  // namespace

bool pdl_enabled(int compute_capability) { return compute_capability >= 90 && !pdl_switched_off(); }

void set_pdl_capability(int compute_capability) { current_capability.store(compute_capability); }

void launch_kernel(const void* kernel, dim3 grid, dim3 block, void** params, size_t shared_bytes, cudaStream_t stream,
                   const char* what) {
  if (!pdl_enabled(current_capability.load())) {
    check(cudaLaunchKernel(kernel, grid, block, params, shared_bytes, stream), what);
    return;
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  check(cudaLaunchKernelExC(&config, kernel, params), what);
}

}  // namespace tessera::backends::cuda
