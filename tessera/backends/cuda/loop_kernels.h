#pragma once
// Generated kernels on the GPU: the fused clusters' loop kernels (tessera/lower) written in the CUDA
// dialect, every kernel of a graph in one NVRTC module (one compile per graph, cached on disk). Each
// emitted body keeps the common signature (pointer arrays, a [begin, end) range); a __global__
// wrapper per kernel takes the pointers by value, so a launch needs no device-side argument table and
// can be captured in a CUDA graph as it is.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/cuda/nvrtc_compiler.h"
#include "tessera/codegen/dialect.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::backends::cuda {

// The most buffers a generated kernel may read or write (kernel parameters are passed by value).
inline constexpr int kMaxKernelBuffers = 64;

class LoopKernel {
 public:
  LoopKernel(std::shared_ptr<KernelModule> module, cudaKernel_t kernel, std::string name, int inputs, int outputs,
             int64_t range, codegen::ThreadMapping mapping, int64_t scratch_bytes, int multiprocessors);
  ~LoopKernel();
  LoopKernel(const LoopKernel&) = delete;
  LoopKernel& operator=(const LoopKernel&) = delete;
  // in/out: device addresses (inputs the kernel does not read may be null).
  void launch(const void* const* in, void* const* out, cudaStream_t stream) const;
  const std::string& name() const { return name_; }
  int64_t range() const { return range_; }
  const codegen::ThreadMapping& mapping() const { return mapping_; }

 private:
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_;
  std::string name_;
  int inputs_, outputs_;
  int64_t range_;
  codegen::ThreadMapping mapping_;
  void* scratch_ = nullptr;  // a split reduction's partials and counters (device memory)
  unsigned grid_ = 1, block_ = 256;
};

// The CUDA source of the kernels (for tests and TESSERA_DUMP_KERNELS) and their compiled form.
std::string loop_kernels_source(const std::vector<lower::Kernel>& kernels);
std::vector<std::shared_ptr<const LoopKernel>> compile_loop_kernels(const std::vector<lower::Kernel>& kernels,
                                                                    NvrtcCompiler& compiler, int multiprocessors);

}  // namespace tessera::backends::cuda
