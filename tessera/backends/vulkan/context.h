#pragma once
// What the Vulkan backend keeps for its one device: the instance, the chosen physical device (a
// discrete GPU first, or $TESSERA_VULKAN_DEVICE=N), the logical device with one compute queue, the
// optional features it enabled, the memory (VulkanDevice) and the pipelines. Made once, on first use,
// and kept for the process (Mesa's drivers may already be torn down when static destructors run).
#include <vulkan/vulkan.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace tessera::backends::vulkan {

class VulkanDevice;
class Pipelines;

/// The optional device features the backend enabled (each one widens what supports() accepts).
struct Features {
  bool storage8 = false;   // 8-bit storage buffers with int8 arithmetic: i8, u8, bool tensors
  bool storage16 = false;  // 16-bit storage buffers with int16 arithmetic: f16, bf16 tensors
  bool int64 = false;      // shaderInt64: i64, u64 tensors
  bool float64 = false;    // shaderFloat64: f64 tensors
  // subgroupAdd and friends in compute shaders (reductions without shared memory), and the
  // device's subgroup width (0 when unknown).
  bool subgroup_arithmetic = false;
  uint32_t subgroup_size = 0;
  // subgroupShuffleXor in compute shaders (the wide quantized matvec's butterfly over a row's lanes).
  bool subgroup_shuffle = false;
  // VK_NV_cooperative_matrix with 16x16x16 f16 x f16 -> f32 products per subgroup of 32 (tensor cores
  // on NVIDIA GPUs), shaderFloat16 and the Vulkan memory model its SPIR-V declares: f16 matmuls
  // through matmul_coopmat_glsl.
  bool coopmat_f16 = false;
};

/// The instance, device, queue and per-device state of the backend.
class Context {
 public:
  /// The context on the selected device, or null with `why` set to a one-line reason (no loader, no
  /// driver, no device, $TESSERA_VULKAN_DEVICE out of range).
  static Context* create(std::string& why);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice vk_device() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_properties_; }
  const Features& features() const { return features_; }
  uint32_t physical_devices() const { return physical_count_; }
  uint32_t selected_index() const { return selected_; }
  std::string description() const;  // "llvmpipe (cpu), Vulkan 1.3.230, driver ..."

  /// The device-local memory and transfers (a tessera::Device).
  VulkanDevice& memory() { return *memory_; }
  /// Shaders and pipelines, cached by hash.
  Pipelines& pipelines() { return *pipelines_; }

  /// Serialises recording and submission: one queue, one command pool.
  std::recursive_mutex& queue_mutex() { return mutex_; }
  /// A primary command buffer from the context's pool, valid until reset_commands().
  VkCommandBuffer new_command_buffer();
  /// Frees every command buffer handed out (the caller holds queue_mutex and nothing is in flight).
  void reset_commands();
  /// Submits `commands` (ended) and waits for them to finish; throws naming `what` on failure.
  void submit_and_wait(VkCommandBuffer commands, const char* what);
  /// Records fn into a fresh command buffer, submits it and waits (copies, uploads).
  void run_once(const std::function<void(VkCommandBuffer)>& fn, const char* what);

 private:
  Context() = default;
  std::string init();

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0, physical_count_ = 0, selected_ = 0;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  Features features_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::recursive_mutex mutex_;
  std::unique_ptr<VulkanDevice> memory_;
  std::unique_ptr<Pipelines> pipelines_;
};

}  // namespace tessera::backends::vulkan
