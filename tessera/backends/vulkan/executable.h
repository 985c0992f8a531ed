#pragma once
// The Vulkan backend's Executable (common::DeviceExecutable binds the buffers). A run records every
// step into one command buffer (recorder.h), submits it and waits: outputs are ready when run()
// returns, and invalid data a shader found (an index out of range) is reported by that run as an error.
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/backends/common/device_executable.h"
#include "tessera/backends/common/program.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/recorder.h"

namespace tessera::backends::vulkan {

/// A compiled graph on the Vulkan device.
class VulkanExecutable final : public common::DeviceExecutable {
 public:
  VulkanExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                   std::vector<Array> constants, std::vector<Alias> aliases);
  /// What the last run recorded: dispatches, barriers, per-dispatch times when profiling.
  RecordStats last_run() const;

 private:
  void launch(common::RunContext& ctx) override;
  void finish() override;

  Context& context_;
  std::unique_ptr<Recorder> recorder_;
  // The word the library shaders set when the data is invalid (an index out of range); defined only
  // when a step may set it, then read back inside every run's submission.
  Array status_;
  uint32_t status_word_ = 0;  // what the last run read back
};

}  // namespace tessera::backends::vulkan
