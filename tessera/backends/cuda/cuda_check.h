#pragma once
// CUDA runtime, NVRTC and cuBLASLt status codes as tessera::Error: the message names the call that
// failed and the library's own words for the code.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <string>

namespace tessera::backends::cuda {

void check(cudaError_t status, const char* what);
void check(nvrtcResult status, const char* what);
void check(cublasStatus_t status, const char* what);

}  // namespace tessera::backends::cuda
