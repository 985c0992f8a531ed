#include "tessera/backends/cuda/copy_kernel.h"

#include <algorithm>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/launch.h"
#include "tessera/backends/cuda/grid.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace {

// Kept in step with the struct in the source below.
struct CopyParams {
  int64_t shape[kMaxCopyAxes];
  int64_t src_strides[kMaxCopyAxes];
  int64_t dst_strides[kMaxCopyAxes];
  int64_t src_offset, dst_offset, numel;
  int32_t rank;
};

const char* kCopySource = R"(
typedef long long int64_t;
struct tsr_copy_params {
  int64_t shape[16], src_strides[16], dst_strides[16];
  int64_t src_offset, dst_offset, numel;
  int rank;
};
template <class T>
__device__ void tsr_copy(const tsr_copy_params& p, const T* src, T* dst) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += step) {
    int64_t rest = i, s = p.src_offset, d = p.dst_offset;
    for (int a = p.rank - 1; a >= 0; --a) {
      const int64_t q = rest / p.shape[a], c = rest - q * p.shape[a];
      s += c * p.src_strides[a];
      d += c * p.dst_strides[a];
      rest = q;
    }
    dst[d] = src[s];
  }
}
extern "C" __global__ void tsr_copy1(const tsr_copy_params p, const unsigned char* s, unsigned char* d) {
  TSR_GRID_PROLOGUE();
  tsr_copy(p, s, d);
}
extern "C" __global__ void tsr_copy2(const tsr_copy_params p, const unsigned short* s, unsigned short* d) {
  TSR_GRID_PROLOGUE();
  tsr_copy(p, s, d);
}
extern "C" __global__ void tsr_copy4(const tsr_copy_params p, const unsigned int* s, unsigned int* d) {
  TSR_GRID_PROLOGUE();
  tsr_copy(p, s, d);
}
extern "C" __global__ void tsr_copy8(const tsr_copy_params p, const unsigned long long* s, unsigned long long* d) {
  TSR_GRID_PROLOGUE();
  tsr_copy(p, s, d);
}
)";

int size_index(size_t element_size) {
  switch (element_size) {
    case 1:
      return 0;
    case 2:
      return 1;
    case 4:
      return 2;
    case 8:
      return 3;
    default:
      throw Error(fmt::format("cuda copy: no kernel for {}-byte elements", element_size));
  }
}

}  // namespace

CopyKernels::CopyKernels(NvrtcCompiler& compiler, int multiprocessors) : multiprocessors_(multiprocessors) {
  module_ = compiler.module(kCopySource, "strided copy kernels");
  const char* names[] = {"tsr_copy1", "tsr_copy2", "tsr_copy4", "tsr_copy8"};
  for (int i = 0; i < 4; ++i) kernels_[i] = module_->kernel(names[i]);
}

void CopyKernels::launch(const StridedCopy& copy, const void* src, void* dst, cudaStream_t stream) const {
  if (copy.numel == 0) return;
  TESSERA_CHECK(copy.shape.size() <= kMaxCopyAxes, "cuda copy: {} axes that cannot be merged (at most {})",
                copy.shape.size(), kMaxCopyAxes);
  CopyParams p{};
  p.rank = static_cast<int32_t>(copy.shape.size());
  for (size_t a = 0; a < copy.shape.size(); ++a) {
    p.shape[a] = copy.shape[a];
    p.src_strides[a] = copy.src_strides[a];
    p.dst_strides[a] = copy.dst_strides[a];
  }
  p.src_offset = copy.src_offset;
  p.dst_offset = copy.dst_offset;
  p.numel = copy.numel;
  void* params[] = {&p, const_cast<void**>(&src), &dst};
  launch_kernel(reinterpret_cast<const void*>(kernels_[size_index(copy.element_size)]),
                         dim3(grid_stride_blocks(copy.numel, multiprocessors_)), dim3(256), params, 0, stream, "cudaLaunchKernel (strided copy)");
}

}  // namespace tessera::backends::cuda
