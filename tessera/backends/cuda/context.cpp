#include "tessera/backends/cuda/context.h"

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/launch.h"

namespace tessera::backends::cuda {

namespace {
// cuBLASLt's guidance for Hopper: 32 MiB of workspace lets it pick its fastest kernels.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
}  // namespace

Context::Context(int device_index) : device_(device_index), compiler_(device_.compute_capability()) {
  set_pdl_capability(device_.compute_capability());
  check(cublasLtCreate(&blas_), "cublasLtCreate");
  workspace_ = device_.allocate(kWorkspaceBytes);
  workspace_bytes_ = kWorkspaceBytes;
}

Context::~Context() {
  device_.synchronize();
  if (workspace_ != nullptr) device_.deallocate(workspace_, workspace_bytes_);
  if (blas_ != nullptr) cublasLtDestroy(blas_);
}

const void* Context::ones(DType dtype, int64_t n) {
  std::lock_guard<std::mutex> lock(ones_mutex_);
  Array& a = ones_[{dtype, n}];
  if (!a.defined()) a = Array::full(dtype, {n}, 1.0).to(device_);
  return a.device_data();
}

const CopyKernels& Context::copies() {
  if (!copies_) copies_ = std::make_unique<CopyKernels>(compiler_, multiprocessors());
  return *copies_;
}

}  // namespace tessera::backends::cuda
