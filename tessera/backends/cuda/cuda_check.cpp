#include "tessera/backends/cuda/cuda_check.h"

#include "tessera/core/error.h"

namespace tessera::backends::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clears a sticky-free error so the next call does not report this one again
  throw Error(fmt::format("cuda: {} failed: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)));
}

void check(nvrtcResult status, const char* what) {
  if (status == NVRTC_SUCCESS) return;
  throw Error(fmt::format("cuda: {} failed: {}", what, nvrtcGetErrorString(status)));
}

void check(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(fmt::format("cuda: {} failed: {} ({})", what, cublasLtGetStatusString(status),
                          cublasLtGetStatusName(status)));
}

}  // namespace tessera::backends::cuda
