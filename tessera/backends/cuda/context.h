#pragma once
// What the CUDA backend keeps per GPU: the device (memory pool, stream), the NVRTC compiler with its
// caches, the cuBLASLt handle and its workspace, the generic copy kernels and the executables' status
// words. Made on first use.
#include <cublasLt.h>

#include <map>
#include <memory>
#include <mutex>

#include "tessera/core/array.h"

#include "tessera/backends/cuda/copy_kernel.h"
#include "tessera/backends/cuda/cuda_device.h"
#include "tessera/backends/cuda/nvrtc_compiler.h"
#include "tessera/backends/cuda/status_words.h"

namespace tessera::backends::cuda {

class Context {
 public:
  explicit Context(int device_index);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  CudaDevice& device() { return device_; }
  NvrtcCompiler& compiler() { return compiler_; }
  cublasLtHandle_t blas() const { return blas_; }
  void* workspace() const { return workspace_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  const CopyKernels& copies();
  int multiprocessors() const { return device_.properties().multiProcessorCount; }
  // n ones of dtype (f32, f16, bf16) in device memory, kept for the process (sums as products).
  const void* ones(DType dtype, int64_t n);
  StatusWords& status_words() { return status_words_; }

 private:
  CudaDevice device_;
  NvrtcCompiler compiler_;
  cublasLtHandle_t blas_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::unique_ptr<CopyKernels> copies_;
  std::mutex ones_mutex_;
  std::map<std::pair<DType, int64_t>, Array> ones_;
  StatusWords status_words_;
};

}  // namespace tessera::backends::cuda
