#pragma once
// The CUDA backend's Executable (common::DeviceExecutable binds the buffers). A run launches every
// step on the device's stream; the second run with
// the same addresses captures the steps as a CUDA graph, and later runs with those addresses replay
// it (one launch). Runs return without waiting for the GPU: reading an output on the host waits.
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/backends/common/device_executable.h"
#include "tessera/backends/common/program.h"
#include "tessera/backends/cuda/context.h"
#include "tessera/backends/cuda/step_profiler.h"

namespace tessera::backends::cuda {

class CudaExecutable final : public common::DeviceExecutable {
 public:
  CudaExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                 std::vector<Array> constants, std::vector<Alias> aliases);
  ~CudaExecutable() override;
  int graph_captures() const { return captures_; }
  int graph_replays() const { return replays_; }

 private:
  void prepare() override;
  void launch(common::RunContext& ctx) override;
  // Throws if a kernel of an earlier, finished run raised the index-error flag (never waits).
  void check_previous_run();
  void launch_steps(const common::RunContext& ctx);

  Context& context_;
  struct Captured {
    cudaGraphExec_t exec = nullptr;
    int runs = 0;  // runs seen with these addresses (captured on the second)
  };
  std::map<std::vector<std::byte*>, Captured> graphs_;
  bool use_graphs_ = true;
  StatusWords::Slot status_;  // the index-error and Adam-step flags on the device, and their pinned copy
  cudaEvent_t status_ready_ = nullptr;
  bool status_pending_ = false;
  int captures_ = 0, replays_ = 0;
  std::unique_ptr<StepProfiler> profiler_;  // TESSERA_CUDA_PROFILE=1
};

}  // namespace tessera::backends::cuda
