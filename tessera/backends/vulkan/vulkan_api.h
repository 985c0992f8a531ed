#pragma once
// The Vulkan functions the backend calls, loaded at run time: libvulkan.so.1 is opened with dlopen on
// first use (never linked), so a machine without a loader runs everything else and reports the backend
// as unavailable. Global functions come from the loader, the rest from the instance and the device.
#include <vulkan/vulkan.h>

#include <string>

namespace tessera::backends::vulkan {

#define TESSERA_VK_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance)                  \
  X(vkEnumerateInstanceVersion)

#define TESSERA_VK_INSTANCE_FUNCTIONS(X)       \
  X(vkDestroyInstance)                         \
  X(vkEnumeratePhysicalDevices)                \
  X(vkGetPhysicalDeviceProperties)             \
  X(vkGetPhysicalDeviceFeatures2)              \
  X(vkGetPhysicalDeviceProperties2)            \
  X(vkGetPhysicalDeviceMemoryProperties)       \
  X(vkGetPhysicalDeviceQueueFamilyProperties)  \
  X(vkCreateDevice)                            \
  X(vkGetDeviceProcAddr)

#define TESSERA_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                   \
  X(vkGetDeviceQueue)                  \
  X(vkCreateBuffer)                    \
  X(vkDestroyBuffer)                   \
  X(vkGetBufferMemoryRequirements)     \
  X(vkAllocateMemory)                  \
  X(vkFreeMemory)                      \
  X(vkBindBufferMemory)                \
  X(vkMapMemory)                       \
  X(vkUnmapMemory)                     \
  X(vkCreateCommandPool)               \
  X(vkDestroyCommandPool)              \
  X(vkAllocateCommandBuffers)          \
  X(vkResetCommandPool)                \
  X(vkBeginCommandBuffer)              \
  X(vkEndCommandBuffer)                \
  X(vkCmdCopyBuffer)                   \
  X(vkCmdPipelineBarrier)              \
  X(vkCmdBindPipeline)                 \
  X(vkCmdBindDescriptorSets)           \
  X(vkCmdPushConstants)                \
  X(vkCmdDispatch)                     \
  X(vkCmdWriteTimestamp)               \
  X(vkCmdResetQueryPool)               \
  X(vkQueueSubmit)                     \
  X(vkCreateFence)                     \
  X(vkDestroyFence)                    \
  X(vkWaitForFences)                   \
  X(vkResetFences)                     \
  X(vkCreateShaderModule)              \
  X(vkDestroyShaderModule)             \
  X(vkCreateDescriptorSetLayout)       \
  X(vkDestroyDescriptorSetLayout)      \
  X(vkCreatePipelineLayout)            \
  X(vkDestroyPipelineLayout)           \
  X(vkCreateComputePipelines)          \
  X(vkDestroyPipeline)                 \
  X(vkCreatePipelineCache)             \
  X(vkDestroyPipelineCache)            \
  X(vkGetPipelineCacheData)            \
  X(vkCreateDescriptorPool)            \
  X(vkDestroyDescriptorPool)           \
  X(vkResetDescriptorPool)             \
  X(vkAllocateDescriptorSets)          \
  X(vkUpdateDescriptorSets)            \
  X(vkCreateQueryPool)                 \
  X(vkDestroyQueryPool)                \
  X(vkGetQueryPoolResults)             \
  X(vkDeviceWaitIdle)

/// The loaded entry points (null until loaded). One table per process: the backend uses one instance
/// and one device.
struct VulkanApi {
#define TESSERA_VK_MEMBER(name) PFN_##name name = nullptr;
  TESSERA_VK_GLOBAL_FUNCTIONS(TESSERA_VK_MEMBER)
  TESSERA_VK_INSTANCE_FUNCTIONS(TESSERA_VK_MEMBER)
  TESSERA_VK_DEVICE_FUNCTIONS(TESSERA_VK_MEMBER)
#undef TESSERA_VK_MEMBER
  PFN_vkGetInstanceProcAddr get_instance_proc = nullptr;
};

/// The process's table.
VulkanApi& vk();

/// Opens the loader and loads the global functions; returns "" or why it could not (one line).
std::string load_vulkan_loader();
/// Loads the instance-level functions of `instance`; returns "" or the first one missing.
std::string load_instance_functions(VkInstance instance);
/// Loads the device-level functions of `device`; returns "" or the first one missing.
std::string load_device_functions(VkDevice device);

/// The name of a VkResult ("VK_ERROR_OUT_OF_DEVICE_MEMORY").
const char* result_name(VkResult r);
/// Throws tessera::Error "vulkan: <what> failed: <result>" unless r is VK_SUCCESS.
void check(VkResult r, const char* what);

}  // namespace tessera::backends::vulkan
