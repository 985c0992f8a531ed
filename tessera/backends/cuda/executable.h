#pragma once
// The CUDA backend's Executable: a Program from the shared lowering plus, per instance, the device
// arena, the constants uploaded once, and staging for inputs that are not packed device memory. A
// run resolves buffer addresses and launches every step on the device's stream; the second run with
// the same addresses captures the steps as a CUDA graph, and later runs with those addresses replay
// it (one launch). Runs return without waiting for the GPU: reading an output on the host waits.
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/backends/common/program.h"
#include "tessera/backends/cuda/context.h"
#include "tessera/backends/cuda/step_profiler.h"

namespace tessera::backends::cuda {

class CudaExecutable final : public Executable {
 public:
  CudaExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                 std::vector<Array> constants, std::vector<Alias> aliases);
  ~CudaExecutable() override;
  std::vector<Array> run(const std::vector<Array>& inputs) override;
  void run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) override;
  const ir::Graph& graph() const override { return graph_; }
  int64_t peak_bytes() const override { return program_->arena_bytes; }
  Device& device() const override { return context_.device(); }
  const common::Program& program() const { return *program_; }
  int graph_captures() const { return captures_; }
  int graph_replays() const { return replays_; }

 private:
  void execute(const std::vector<Array>& inputs, std::vector<Array>& outputs);
  // Throws if a kernel of an earlier, finished run raised the index-error flag (never waits).
  void check_previous_run();
  void launch_steps(const common::RunContext& ctx);

  Context& context_;
  ir::Graph graph_;
  std::shared_ptr<const common::Program> program_;
  std::vector<Array> constants_;  // on the device
  std::mutex mutex_;
  Array arena_;  // device bytes
  std::vector<std::byte*> addresses_;
  std::vector<Array> input_staging_, output_staging_;
  // Per output, the aliased input it may be written over directly (common::can_write_over_input), else -1.
  std::vector<int32_t> writes_over_input_;
  struct Captured {
    cudaGraphExec_t exec = nullptr;
    int runs = 0;  // runs seen with these addresses (captured on the second)
  };
  std::map<std::vector<std::byte*>, Captured> graphs_;
  bool use_graphs_ = true;
  Array status_;                    // i32[1] on the device: the index-error flag
  int32_t* status_host_ = nullptr;  // pinned copy of it, written after every run
  cudaEvent_t status_ready_ = nullptr;
  bool status_pending_ = false;
  int captures_ = 0, replays_ = 0;
  std::unique_ptr<StepProfiler> profiler_;  // TESSERA_CUDA_PROFILE=1
};

}  // namespace tessera::backends::cuda
