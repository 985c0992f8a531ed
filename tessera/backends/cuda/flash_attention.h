// kv_cache_attention for many queries (a prefill) on the tensor cores: a flash-attention kernel whose
// score and value products are f16 mma.sync tiles with f32 accumulators and an online softmax in
// registers. A decode step (one query) keeps the CUDA-core kernel of library_ops_attention.cpp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "tessera/core/dtype.h"
#include "tessera/ir/node.h"

namespace tessera::backends::cuda {

// Queries per block of the tensor-core kernel (16 per warp, four warps per query head).
inline constexpr int kFlashQueries = 64;

// Whether the node runs on the tensor-core kernel on a device of this compute capability: at least
// 64 queries by default (TESSERA_CUDA_FLASH_ATTENTION=0 turns it off, =1 takes any number of
// queries), head sizes that are multiples of 16 up to 128, f16 or f32 caches, sm_80 or newer.
bool flash_attention_fits(const ir::Node& node, int compute_capability);

struct FlashAttentionKernel {
  std::string source;  // defines `tsr_flash_attention`
  dim3 grid, block;
};

// The kernel and its launch shape for m queries of hq heads over hk KV heads with these head sizes and
// types; `vector_rows` when every cache row starts at a 16-byte boundary (an f16 cache's rows are then
// fetched by asynchronous 16-byte copies, two tiles in flight).
FlashAttentionKernel flash_attention_kernel(int64_t d, int64_t dv, DType cache, DType pos, bool vector_rows, int64_t m,
                                            int64_t hq, int64_t hk);

}  // namespace tessera::backends::cuda
