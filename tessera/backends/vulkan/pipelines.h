#pragma once
// GLSL compute shaders to pipelines: compiled at run time with shaderc to SPIR-V (kept in memory and in
// the kernel cache on disk, keyed by the source's hash), made into compute pipelines whose layout is N
// storage buffers at bindings 0..N-1 plus kPushBytes of push constants, cached by hash in memory, with
// a VkPipelineCache saved to disk per device so a second process skips the driver's compile too.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::backends::vulkan {

class Context;

/// Push-constant bytes every pipeline declares (the least every Vulkan device offers).
inline constexpr uint32_t kPushBytes = 128;

/// A compute pipeline and its layout.
struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  int bindings = 0;
  std::string name;  // what it computes, for profiles and errors
};

/// How many shaders came from where (for tests and `tessera devices`).
struct PipelineStats {
  int shaderc_compiles = 0;  // GLSL compiled by shaderc in this process
  int spirv_disk_hits = 0;   // SPIR-V read from the kernel cache
  int pipelines = 0;         // pipelines made
  int pipeline_hits = 0;     // pipeline() answered from memory
};

/// The shader compiler and pipeline cache of one device.
class Pipelines {
 public:
  explicit Pipelines(Context& context);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  /// SPIR-V of a GLSL 450 compute shader. A shader that does not compile throws tessera::Error with the
  /// path where its GLSL was saved and shaderc's message; `what` names it.
  std::vector<uint32_t> spirv(const std::string& glsl, const std::string& what);
  /// The pipeline of `glsl` with `bindings` storage buffers (cached by the source's hash).
  std::shared_ptr<const Pipeline> pipeline(const std::string& glsl, int bindings, const std::string& what);
  /// Writes the driver's pipeline cache to disk when pipelines were made since the last save.
  void save_cache();
  PipelineStats stats() const;

 private:
  std::string cache_file() const;

  Context& context_;
  mutable std::mutex mutex_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  bool dirty_ = false;
  std::unordered_map<std::string, std::shared_ptr<const Pipeline>> pipelines_;  // by source hash
  PipelineStats stats_;
};

}  // namespace tessera::backends::vulkan
