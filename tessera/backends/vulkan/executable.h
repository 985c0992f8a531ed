#pragma once
// The Vulkan backend's Executable: a Program from the shared lowering plus, per instance, the device
// arena, the constants uploaded once, and staging for inputs and outputs that are not packed device
// memory. A run resolves buffer addresses, records every step into one command buffer (recorder.h),
// submits it and waits: outputs are ready when run() returns, and invalid data a shader found (an index
// out of range) is reported by that run as an error.
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/backends/common/program.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/recorder.h"

namespace tessera::backends::vulkan {

/// A compiled graph on the Vulkan device.
class VulkanExecutable final : public Executable {
 public:
  VulkanExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                   std::vector<Array> constants, std::vector<Alias> aliases);
  std::vector<Array> run(const std::vector<Array>& inputs) override;
  void run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) override;
  const ir::Graph& graph() const override { return graph_; }
  int64_t peak_bytes() const override { return program_->arena_bytes; }
  Device& device() const override;
  /// The lowered program (steps, memory plan).
  const common::Program& program() const { return *program_; }
  /// What the last run recorded: dispatches, barriers, per-dispatch times when profiling.
  RecordStats last_run() const;

 private:
  void execute(const std::vector<Array>& inputs, std::vector<Array>& outputs);

  Context& context_;
  ir::Graph graph_;
  std::shared_ptr<const common::Program> program_;
  std::vector<Array> constants_;  // on the device
  mutable std::mutex mutex_;
  Array arena_;  // device bytes
  std::vector<std::byte*> addresses_;
  std::vector<Array> input_staging_, output_staging_;
  std::vector<int32_t> writes_over_input_;  // per output, the aliased input it may overwrite, else -1
  std::unique_ptr<Recorder> recorder_;
  // The word the library shaders set when the data is invalid (an index out of range); defined only
  // when a step may set it, then read after every run.
  Array status_;
};

}  // namespace tessera::backends::vulkan
