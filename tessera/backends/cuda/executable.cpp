#include "tessera/backends/cuda/executable.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/steps.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace {

constexpr size_t kMaxCapturedGraphs = 8;  // address sets kept per executable (double buffering uses 2)

}  // namespace

// Packed device memory whose address suits every kernel (16-byte aligned: the vector accesses) is used
// in place.
CudaExecutable::CudaExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                               std::vector<Array> constants, std::vector<Alias> aliases)
    : DeviceExecutable("cuda", context.device(), std::move(graph), std::move(program), std::move(constants),
                       std::move(aliases), 16),
      context_(context) {
  const char* env = std::getenv("TESSERA_CUDA_GRAPHS");
  use_graphs_ = env == nullptr || std::strcmp(env, "0") != 0;
  if (StepProfiler::enabled()) profiler_ = std::make_unique<StepProfiler>(this->graph().name());
  status_ = context_.status_words().acquire(context_.device().stream());
  check(cudaEventCreateWithFlags(&status_ready_, cudaEventDisableTiming), "cudaEventCreate");
}

CudaExecutable::~CudaExecutable() {
  if (status_ready_ != nullptr) cudaEventDestroy(status_ready_);
  context_.status_words().release(status_);
  for (auto& [key, g] : graphs_) {
    if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
  }
}

void CudaExecutable::check_previous_run() {
  if (!status_pending_) return;
  // Never waits: while the previous run is still going its word is read at a later run (the device
  // flag stays raised until it is reported).
  const cudaError_t state = cudaEventQuery(status_ready_);
  if (state == cudaErrorNotReady) {
    cudaGetLastError();
    return;
  }
  check(state, "cudaEventQuery (status word)");
  status_pending_ = false;
  if (*status_.host == 0) return;
  const int32_t word = *status_.host;
  *status_.host = 0;
  check(cudaMemsetAsync(status_.device, 0, sizeof(int32_t), context_.device().stream()), "cudaMemsetAsync");
  if ((word & kStatusAdamStep) != 0) {
    fail("cuda: in an earlier run of graph '{}', an adam_update step was not a whole number >= 1 (its parameters "
         "were updated with it anyway)",
         graph().name());
  }
  fail("cuda: in an earlier run of graph '{}', an index was out of range (a gather, scatter_add or index_copy index "
       "must lie in 0..size-1 of its axis, an index_copy index may appear once, a kv_cache_attention position must "
       "lie inside the cache); the elements it would have read were set to 0",
       graph().name());
}

void CudaExecutable::prepare() {
  context_.device().make_current();
  check_previous_run();
}

void CudaExecutable::launch(common::RunContext& ctx) {
  CudaDevice& dev = context_.device();
  ctx.stream = dev.stream();
  ctx.status = status_.device;
  launch_steps(ctx);
  // The flag comes back with the run; the next run (or its outputs' reader) does not wait for it.
  check(cudaMemcpyAsync(status_.host, status_.device, sizeof(int32_t), cudaMemcpyDeviceToHost, dev.stream()),
        "cudaMemcpyAsync (status word)");
  check(cudaEventRecord(status_ready_, dev.stream()), "cudaEventRecord (status word)");
  status_pending_ = true;
}

void CudaExecutable::launch_steps(const common::RunContext& ctx) {
  const common::Program& p = program();
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream);
  if (profiler_) {
    profiler_->run(p.steps, ctx, stream);
    return;
  }
  if (!use_graphs_ || p.steps.empty()) {
    for (const auto& step : p.steps) step->run(ctx);
    return;
  }
  auto it = graphs_.find(addresses());
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxCapturedGraphs) {
      for (auto& [key, g] : graphs_) {
        if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
      }
      graphs_.clear();
    }
    it = graphs_.emplace(addresses(), Captured{}).first;
  }
  Captured& g = it->second;
  g.runs += 1;
  if (g.exec == nullptr && g.runs < 2) {
    for (const auto& step : p.steps) step->run(ctx);
    return;
  }
  if (g.exec == nullptr) {
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
      for (const auto& step : p.steps) step->run(ctx);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken != nullptr) cudaGraphDestroy(broken);
      throw;
    }
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    const cudaError_t status = cudaGraphInstantiate(&g.exec, graph, 0);
    cudaGraphDestroy(graph);
    check(status, "cudaGraphInstantiate");
    captures_ += 1;
  }
  check(cudaGraphLaunch(g.exec, stream), "cudaGraphLaunch");
  replays_ += 1;
}

}  // namespace tessera::backends::cuda
