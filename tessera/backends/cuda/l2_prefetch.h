#pragma once
// Weights fetched into L2 ahead of the matvec that streams them. A decode step alternates matrix-vector
// products, which read every weight once from device memory, with short kernels (norms, RoPE, cache
// writes, attention) that leave the memory system idle. Right after one product is enqueued, a forked
// branch of the stream asks L2 for the first bytes of the next product's weights (Hopper's bulk L2
// prefetch, a few threads), and that product waits for the branch: the short kernels between them run
// while the weights arrive. Nothing changes any value; only where the product's first reads are served.
// TESSERA_CUDA_L2_PREFETCH=bulk or =lines turns it on (off by default until measured on the H200).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/backends/common/program.h"

namespace tessera::backends::cuda {

class Context;
class KernelModule;

// A step that streams a weight matrix from device memory (the decode matvec) names it here.
class StreamsWeights {
 public:
  virtual ~StreamsWeights() = default;
  virtual common::Operand weights() const = 0;
  virtual int64_t weight_bytes() const = 0;
};

bool l2_prefetch_enabled();

class L2Prefetch {
 public:
  // Plans a prefetch for every weight-streaming step of `program` but the first one: nothing when
  // there are none or prefetching is off.
  L2Prefetch(Context& context, const common::Program& program);
  ~L2Prefetch();
  L2Prefetch(const L2Prefetch&) = delete;
  L2Prefetch& operator=(const L2Prefetch&) = delete;

  bool empty() const { return fetches_.empty(); }
  // Runs the program's steps on `ctx`'s stream with the prefetches forked and joined around them.
  void run(const std::vector<std::unique_ptr<common::Step>>& steps, const common::RunContext& ctx);

 private:
  struct Fetch {
    size_t after = 0;     // forked once this step is enqueued
    size_t consumer = 0;  // joined before this step runs
    common::Operand weights;
    int64_t bytes = 0;
    cudaEvent_t fork = nullptr, join = nullptr;
  };
  std::vector<Fetch> fetches_;
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_ = nullptr;
  cudaStream_t side_ = nullptr;
};

}  // namespace tessera::backends::cuda
