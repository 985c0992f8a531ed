#include "tessera/backends/cuda/step_profiler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"

namespace tessera::backends::cuda {

bool StepProfiler::enabled() {
  const char* env = std::getenv("TESSERA_CUDA_PROFILE");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

StepProfiler::~StepProfiler() {
  if (runs_ > 0) std::fputs(report().c_str(), stderr);
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

void StepProfiler::run(const std::vector<std::unique_ptr<common::Step>>& steps, const common::RunContext& ctx,
                       cudaStream_t stream) {
  if (events_.size() != steps.size() + 1) {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    events_.assign(steps.size() + 1, nullptr);
    for (cudaEvent_t& e : events_) check(cudaEventCreate(&e), "cudaEventCreate (profiler)");
    names_.clear();
    for (const auto& s : steps) names_.push_back(s->describe());
    total_ms_.assign(steps.size(), 0.0);
  }
  check(cudaEventRecord(events_[0], stream), "cudaEventRecord (profiler)");
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i]->run(ctx);
    check(cudaEventRecord(events_[i + 1], stream), "cudaEventRecord (profiler)");
  }
  check(cudaEventSynchronize(events_.back()), "cudaEventSynchronize (profiler)");
  for (size_t i = 0; i < steps.size(); ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]), "cudaEventElapsedTime (profiler)");
    total_ms_[i] += ms;
  }
  runs_ += 1;
}

std::string StepProfiler::report() const {
  const double all = std::accumulate(total_ms_.begin(), total_ms_.end(), 0.0);
  std::vector<size_t> order(total_ms_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return total_ms_[a] > total_ms_[b]; });
  std::string out = fmt::format("cuda profile of graph '{}': {} runs, {} steps, {:.1f} us per run (steps only)\n",
                                graph_, runs_, total_ms_.size(), 1000.0 * all / std::max(runs_, 1));
  for (size_t i : order) {
    out += fmt::format("  {:9.2f} us {:5.1f}%  #{:<3} {}\n", 1000.0 * total_ms_[i] / std::max(runs_, 1),
                       all > 0 ? 100.0 * total_ms_[i] / all : 0.0, i, names_[i]);
  }
  return out;
}

}  // namespace tessera::backends::cuda
