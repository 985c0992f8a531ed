#include "tessera/backends/vulkan/vulkan_api.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

VulkanApi& vk() {
  static VulkanApi api;
  return api;
}

std::string load_vulkan_loader() {
  VulkanApi& api = vk();
  if (api.get_instance_proc != nullptr) return "";
  void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return fmt::format("no Vulkan loader (libvulkan.so.1: {})", why != nullptr ? why : "not found");
  }
  // Kept open for the process: the functions below stay valid until exit.
  api.get_instance_proc = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (api.get_instance_proc == nullptr) return "the Vulkan loader has no vkGetInstanceProcAddr";
#define TESSERA_VK_LOAD(name) api.name = reinterpret_cast<PFN_##name>(api.get_instance_proc(nullptr, #name));
  TESSERA_VK_GLOBAL_FUNCTIONS(TESSERA_VK_LOAD)
#undef TESSERA_VK_LOAD
  if (api.vkCreateInstance == nullptr) return "the Vulkan loader has no vkCreateInstance";
  return "";
}

std::string load_instance_functions(VkInstance instance) {
  VulkanApi& api = vk();
#define TESSERA_VK_LOAD(name)                                                             \
  api.name = reinterpret_cast<PFN_##name>(api.get_instance_proc(instance, #name));        \
  if (api.name == nullptr) return "the Vulkan instance has no " #name;
  TESSERA_VK_INSTANCE_FUNCTIONS(TESSERA_VK_LOAD)
#undef TESSERA_VK_LOAD
  return "";
}

std::string load_device_functions(VkDevice device) {
  VulkanApi& api = vk();
#define TESSERA_VK_LOAD(name)                                                      \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetDeviceProcAddr(device, #name)); \
  if (api.name == nullptr) return "the Vulkan device has no " #name;
  TESSERA_VK_DEVICE_FUNCTIONS(TESSERA_VK_LOAD)
#undef TESSERA_VK_LOAD
  return "";
}

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult (unnamed)";
  }
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw Error(fmt::format("vulkan: {} failed: {} ({})", what, result_name(r), static_cast<int>(r)));
}

}  // namespace tessera::backends::vulkan
