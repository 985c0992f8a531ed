#pragma once
// Records a whole compiled executable into one command buffer: each step's dispatch binds its buffers
// (descriptor sets from pools reset per run), pushes its constants, and is preceded by buffer memory
// barriers only where it depends on an earlier dispatch of the same buffer bytes (hazards.h). The
// buffer is submitted once and waited for. With $TESSERA_VULKAN_PROFILE=1 every dispatch is bracketed
// by timestamps, reported per step on stderr after the run (and kept for tests).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/backends/vulkan/hazards.h"
#include "tessera/backends/vulkan/pipelines.h"

namespace tessera::backends::vulkan {

class Context;

/// One buffer a dispatch binds: device memory at `address` (a VulkanDevice address), `bytes` long.
struct BufferUse {
  const void* address = nullptr;
  uint64_t bytes = 0;
  bool written = false;
  uint32_t element_size = 4;  // the shader's element type: the binding's start shift is in these
  // Touched only by atomics whose order does not matter (a status word): no barrier is placed for it.
  bool order_free = false;
};

/// What one run recorded (for tests and profiles).
struct RecordStats {
  int dispatches = 0;
  int barriers = 0;  // pipeline barriers between dispatches (the one against earlier submissions not counted)
  std::vector<std::pair<std::string, double>> step_us;  // with profiling: per dispatch, its time
};

/// The command recorder of one executable (not thread-safe: the executable serialises runs).
class Recorder {
 public:
  Recorder(Context& context, bool profile);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// Starts a run's command buffer (the caller holds the context's queue mutex until finish()).
  void begin();
  /// Records one dispatch of groups_x * groups_y * groups_z workgroups (x capped at max_groups()). The descriptor of each binding starts at its address
  /// rounded down to the device's offset alignment; the elements skipped are written into
  /// push[shift_word + binding] (shift_word < 0: every address must be aligned), or with
  /// `shifts_per_word` 4 into byte (binding % 4) of push[shift_word + binding / 4], for shaders with
  /// more bindings than push words. `push` is at most kPushBytes / 4 words.
  void dispatch(const Pipeline& pipeline, const std::vector<BufferUse>& buffers, std::vector<uint32_t> push,
                int shift_word, uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1,
                int shifts_per_word = 1);
  /// Asks finish() to copy `bytes` (a few) at device `address` into `host` once the run is done,
  /// within the run's own submission (a status word).
  void read_back(const void* address, void* host, size_t bytes);
  /// Ends, submits and waits; then fills the read_back() requests and reads the timestamps when profiling.
  void finish(const char* what);
  const RecordStats& stats() const { return stats_; }
  /// The most workgroups a dispatch may ask for along x.
  uint32_t max_groups() const;

 private:
  VkDescriptorSet new_set(const Pipeline& pipeline);
  void barrier();

  Context& context_;
  bool profile_;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools_;
  size_t pool_in_use_ = 0;
  HazardTracker hazards_;
  RecordStats stats_;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t query_capacity_ = 0;
  std::vector<std::string> names_;
  void* read_back_host_ = nullptr;
  size_t read_back_bytes_ = 0;
};

}  // namespace tessera::backends::vulkan
