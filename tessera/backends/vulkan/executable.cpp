#include "tessera/backends/vulkan/executable.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/vulkan_device.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

bool profiling() {
  const char* env = std::getenv("TESSERA_VULKAN_PROFILE");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

}  // namespace

// Packed device memory at an element boundary is bound in place (alignment 0: descriptors take any
// 16-byte start, the shaders' per-binding shifts take the rest).
VulkanExecutable::VulkanExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                                   std::vector<Array> constants, std::vector<Alias> aliases)
    : DeviceExecutable("vulkan", context.memory(), std::move(graph), std::move(program), std::move(constants),
                       std::move(aliases), 0),
      context_(context) {
  recorder_ = std::make_unique<Recorder>(context_, profiling());
  for (const auto& step : this->program().steps) {
    const auto* shader = dynamic_cast<const ShaderStep*>(step.get());
    if (shader != nullptr && shader->reports_status()) {
      status_ = Array::zeros(DType::i32, {1}).to(context_.memory());
      break;
    }
  }
}

RecordStats VulkanExecutable::last_run() const {
  std::lock_guard<std::mutex> lock(run_mutex_);
  return recorder_->stats();
}

void VulkanExecutable::launch(common::RunContext& ctx) {
  status_word_ = 0;
  ctx.stream = recorder_.get();
  if (status_.defined()) ctx.status = status_.device_data();
  std::lock_guard<std::recursive_mutex> queue(context_.queue_mutex());
  recorder_->begin();
  try {
    for (const auto& step : program().steps) step->run(ctx);
    if (status_.defined()) recorder_->read_back(status_.device_data(), &status_word_, sizeof status_word_);
  } catch (...) {
    context_.reset_commands();  // the half-recorded buffer is dropped, never submitted
    throw;
  }
  recorder_->finish(graph().name().c_str());
}

void VulkanExecutable::finish() {
  if (status_word_ == 0) return;
  const uint32_t zero = 0;
  context_.memory().copy_from_host(status_.device_data(), &zero, sizeof zero);
  throw Error(fmt::format("vulkan: graph '{}': {}", graph().name(), status_message(status_word_)));
}

}  // namespace tessera::backends::vulkan
