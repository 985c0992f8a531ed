#pragma once
// Strided copies on the GPU (packing a view, copying outputs into place): one generic kernel per
// element size, with the copy's merged axes and strides passed by value, compiled once per process
// (and cached on disk) rather than once per shape.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/backends/cuda/nvrtc_compiler.h"

namespace tessera::backends::cuda {

inline constexpr int kMaxCopyAxes = 16;

struct StridedCopy {
  std::vector<int64_t> shape, src_strides, dst_strides;  // merged axes, innermost last, in elements
  int64_t src_offset = 0, dst_offset = 0, numel = 0;
  size_t element_size = 4;
};

class CopyKernels {
 public:
  CopyKernels(NvrtcCompiler& compiler, int multiprocessors);
  // src/dst: the buffers' base addresses; offsets and strides come from the copy.
  void launch(const StridedCopy& copy, const void* src, void* dst, cudaStream_t stream) const;

 private:
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernels_[4] = {};  // 1, 2, 4, 8-byte elements
  int multiprocessors_;
};

}  // namespace tessera::backends::cuda
