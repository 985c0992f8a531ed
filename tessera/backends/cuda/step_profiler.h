#pragma once
// TESSERA_CUDA_PROFILE=1: every step of a CUDA executable timed with a pair of events (CUDA graphs
// off, one synchronisation per run), and a table of where the time went printed to stderr when the
// executable is destroyed: each step's description, calls, mean and total time, share of the run.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "tessera/backends/common/program.h"

namespace tessera::backends::cuda {

class StepProfiler {
 public:
  static bool enabled();  // TESSERA_CUDA_PROFILE=1
  explicit StepProfiler(std::string graph_name) : graph_(std::move(graph_name)) {}
  ~StepProfiler();
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;
  // Runs the steps on `stream`, waits for them and adds their times.
  void run(const std::vector<std::unique_ptr<common::Step>>& steps, const common::RunContext& ctx, cudaStream_t stream);
  std::string report() const;

 private:
  std::string graph_;
  std::vector<cudaEvent_t> events_;
  std::vector<std::string> names_;
  std::vector<double> total_ms_;
  int runs_ = 0;
};

}  // namespace tessera::backends::cuda
