#include "tessera/backends/cuda/l2_prefetch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/backends/cuda/context.h"
#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/nvrtc_compiler.h"

namespace tessera::backends::cuda {

namespace {

constexpr unsigned kPrefetchBlocks = 32, kPrefetchThreads = 32;

// Each thread asks for 16 KB stretches (bulk requests are multiples of 16 bytes at 16-byte aligned
// addresses; a weight buffer starts aligned and a short last stretch is rounded down). LINES=1 uses one
// prefetch instruction per 128-byte line instead.
constexpr const char* kPrefetchSource = R"CUDA(
extern "C" __global__ void tsr_l2_prefetch(const char* p, unsigned long long bytes) {
  TSR_GRID_PROLOGUE();
#if LINES
  const unsigned long long step = 128ull * gridDim.x * blockDim.x;
  for (unsigned long long o = 128ull * (blockIdx.x * blockDim.x + threadIdx.x); o < bytes; o += step)
    asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p + o));
#else
  const unsigned long long chunk = 16384, step = chunk * gridDim.x * blockDim.x;
  for (unsigned long long o = chunk * (blockIdx.x * blockDim.x + threadIdx.x); o < bytes; o += step) {
    const unsigned size = (unsigned)((bytes - o < chunk ? bytes - o : chunk) & ~15ull);
    if (size != 0) asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p + o), "r"(size) : "memory");
  }
#endif
}
)CUDA";

const char* mode() {
  const char* env = std::getenv("TESSERA_CUDA_L2_PREFETCH");
  return env == nullptr ? "0" : env;
}

// How much of each product's weights to ask for: a share of L2 (its MiB with TESSERA_CUDA_L2_WINDOW_MB).
int64_t window_bytes(Context& context) {
  if (const char* env = std::getenv("TESSERA_CUDA_L2_WINDOW_MB")) return std::atoll(env) << 20;
  return static_cast<int64_t>(context.device().properties().l2CacheSize) / 2;
}

}  // namespace

bool l2_prefetch_enabled() { return std::strcmp(mode(), "0") != 0; }

L2Prefetch::L2Prefetch(Context& context, const common::Program& program) {
  if (!l2_prefetch_enabled() || context.device().properties().major < 9) return;
  const int64_t window = window_bytes(context);
  std::vector<size_t> streaming;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    if (dynamic_cast<const StreamsWeights*>(program.steps[i].get()) != nullptr) streaming.push_back(i);
  }
  for (size_t j = 1; j < streaming.size(); ++j) {
    const auto& s = dynamic_cast<const StreamsWeights&>(*program.steps[streaming[j]]);
    Fetch f;
    f.after = streaming[j - 1];
    f.consumer = streaming[j];
    f.weights = s.weights();
    f.bytes = std::min(s.weight_bytes(), window);
    if (f.bytes >= 16) fetches_.push_back(f);
  }
  if (fetches_.empty()) return;
  const bool lines = std::strcmp(mode(), "lines") == 0;
  module_ = context.compiler().module(std::string("#define LINES ") + (lines ? "1\n" : "0\n") + kPrefetchSource,
                                      "L2 prefetch kernel");
  kernel_ = module_->kernel("tsr_l2_prefetch");
  context.device().make_current();
  check(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreate (L2 prefetch)");
  for (Fetch& f : fetches_) {
    check(cudaEventCreateWithFlags(&f.fork, cudaEventDisableTiming), "cudaEventCreate (L2 prefetch)");
    check(cudaEventCreateWithFlags(&f.join, cudaEventDisableTiming), "cudaEventCreate (L2 prefetch)");
  }
}

L2Prefetch::~L2Prefetch() {
  for (Fetch& f : fetches_) {
    if (f.fork != nullptr) cudaEventDestroy(f.fork);
    if (f.join != nullptr) cudaEventDestroy(f.join);
  }
  if (side_ != nullptr) cudaStreamDestroy(side_);
}

void L2Prefetch::run(const std::vector<std::unique_ptr<common::Step>>& steps, const common::RunContext& ctx) {
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  size_t next_fork = 0, next_join = 0;  // fetches are in step order by both points
  for (size_t i = 0; i < steps.size(); ++i) {
    while (next_join < fetches_.size() && fetches_[next_join].consumer == i) {
      check(cudaStreamWaitEvent(stream, fetches_[next_join].join, 0), "cudaStreamWaitEvent (L2 prefetch)");
      ++next_join;
    }
    steps[i]->run(ctx);
    while (next_fork < fetches_.size() && fetches_[next_fork].after == i) {
      const Fetch& f = fetches_[next_fork++];
      check(cudaEventRecord(f.fork, stream), "cudaEventRecord (L2 prefetch)");
      check(cudaStreamWaitEvent(side_, f.fork, 0), "cudaStreamWaitEvent (L2 prefetch)");
      const char* p = ctx.ptr<const char>(f.weights);
      unsigned long long bytes = static_cast<unsigned long long>(f.bytes);
      void* params[] = {&p, &bytes};
      check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(kPrefetchBlocks), dim3(kPrefetchThreads), params, 0, side_),
            "cudaLaunchKernel (L2 prefetch)");
      check(cudaEventRecord(f.join, side_), "cudaEventRecord (L2 prefetch)");
    }
  }
}

}  // namespace tessera::backends::cuda
