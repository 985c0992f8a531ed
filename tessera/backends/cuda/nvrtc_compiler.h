#pragma once
// Run-time kernel compilation: CUDA C++ source -> NVRTC -> machine code (cubin) for the device's
// architecture, cached on disk under the kernel cache folder (same root as the CPU JIT's) by a hash of
// the source, the architecture and NVRTC's version, and loaded as a CUDA library. A failed compile
// saves the source next to the cache and reports its path with NVRTC's log.
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera::backends::cuda {

class KernelModule {
 public:
  explicit KernelModule(cudaLibrary_t library) : library_(library) {}
  ~KernelModule();
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;
  // The kernel `name` (an extern "C" __global__ function); throws naming it when absent.
  cudaKernel_t kernel(const std::string& name) const;

 private:
  cudaLibrary_t library_;
};

struct CompileStats {
  int compiled = 0;     // NVRTC runs
  int disk_hits = 0;    // cubins loaded from the disk cache
  int memory_hits = 0;  // modules found in this process
  double nvrtc_ms = 0;
};

class NvrtcCompiler {
 public:
  explicit NvrtcCompiler(int compute_capability) : arch_(compute_capability) {}
  // The module for `kernels` (each __global__ starting with TSR_GRID_PROLOGUE(), launch.h), compiled once
  // per process and once per machine (the disk cache). `what` names the kernels in error messages.
  std::shared_ptr<KernelModule> module(const std::string& kernels, const std::string& what);
  CompileStats stats() const;

 private:
  std::string compile_to_cubin(const std::string& source, const std::string& what);

  int arch_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<KernelModule>> loaded_;  // by content key
  CompileStats stats_;
};

}  // namespace tessera::backends::cuda
