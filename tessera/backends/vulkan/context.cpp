#include "tessera/backends/vulkan/context.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tessera/backends/vulkan/device_selection.h"
#include "tessera/backends/vulkan/pipelines.h"
#include "tessera/backends/vulkan/vulkan_api.h"
#include "tessera/backends/vulkan/vulkan_device.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

int compute_queue_family(VkPhysicalDevice pd) {
  uint32_t n = 0;
  vk().vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vk().vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
  for (uint32_t i = 0; i < n; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && families[i].timestampValidBits > 0) {
      return static_cast<int>(i);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) return static_cast<int>(i);
  }
  return -1;
}

// Whether the device offers VK_NV_cooperative_matrix with a 16x16x16 f16 x f16 + f32 configuration
// at subgroup scope (what matmul_coopmat_glsl is written for).
bool has_f16_coopmat(VkInstance instance, VkPhysicalDevice pd) {
  VulkanApi& api = vk();
  auto enumerate = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
      api.get_instance_proc(instance, "vkEnumerateDeviceExtensionProperties"));
  auto properties = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      api.get_instance_proc(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (enumerate == nullptr || properties == nullptr) return false;
  uint32_t n = 0;
  if (enumerate(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (n > 0 && enumerate(pd, nullptr, &n, exts.data()) != VK_SUCCESS) return false;
  bool listed = false;
  for (const VkExtensionProperties& e : exts) listed = listed || std::string(e.extensionName) == VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
  if (!listed) return false;
  uint32_t count = 0;
  if (properties(pd, &count, nullptr) != VK_SUCCESS || count == 0) return false;
  std::vector<VkCooperativeMatrixPropertiesNV> configs(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (properties(pd, &count, configs.data()) != VK_SUCCESS) return false;
  for (const VkCooperativeMatrixPropertiesNV& c : configs) {
    if (c.MSize == 16 && c.NSize == 16 && c.KSize == 16 && c.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        c.BType == VK_COMPONENT_TYPE_FLOAT16_NV && c.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        c.DType == VK_COMPONENT_TYPE_FLOAT32_NV && c.scope == VK_SCOPE_SUBGROUP_NV) {
      return true;
    }
  }
  return false;
}

}  // namespace

Context* Context::create(std::string& why) {
  // Never destroyed (see the header); a failed one is kept too, since its handles may be half made.
  auto* c = new Context();
  why = c->init();
  return why.empty() ? c : nullptr;
}

std::string Context::init() {
  if (std::string e = load_vulkan_loader(); !e.empty()) return e;
  VulkanApi& api = vk();
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (api.vkEnumerateInstanceVersion != nullptr) api.vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1) return "the Vulkan loader supports only Vulkan 1.0 (1.1 is needed)";
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera";
  app.pEngineName = "tessera";
  app.apiVersion = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  if (VkResult r = api.vkCreateInstance(&ici, nullptr, &instance_); r != VK_SUCCESS) {
    return fmt::format("vkCreateInstance failed: {} (no Vulkan driver installed?)", result_name(r));
  }
  if (std::string e = load_instance_functions(instance_); !e.empty()) return e;

  uint32_t n = 0;
  api.vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  if (n > 0) api.vkEnumeratePhysicalDevices(instance_, &n, devices.data());
  physical_count_ = n;
  std::vector<VkPhysicalDeviceType> types;
  std::vector<bool> usable;
  for (VkPhysicalDevice pd : devices) {
    VkPhysicalDeviceProperties p{};
    api.vkGetPhysicalDeviceProperties(pd, &p);
    types.push_back(p.deviceType);
    usable.push_back(compute_queue_family(pd) >= 0 && p.apiVersion >= VK_API_VERSION_1_1);
  }
  std::string why;
  const int chosen = choose_physical_device(types, usable, std::getenv("TESSERA_VULKAN_DEVICE"), why);
  if (chosen < 0) return why;
  selected_ = static_cast<uint32_t>(chosen);
  physical_ = devices[selected_];
  api.vkGetPhysicalDeviceProperties(physical_, &properties_);
  api.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_properties_);
  queue_family_ = static_cast<uint32_t>(compute_queue_family(physical_));

  // The optional features: asked for in one chain, enabled as found.
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  const bool v12 = properties_.apiVersion >= VK_API_VERSION_1_2 && app.apiVersion >= VK_API_VERSION_1_2;
  if (v12) {
    f2.pNext = &f11;
    f11.pNext = &f12;
  } else {
    f2.pNext = &s16;
  }
  api.vkGetPhysicalDeviceFeatures2(physical_, &f2);
  VkPhysicalDeviceFeatures2 enable{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDevice16BitStorageFeatures e16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  enable.features.shaderInt64 = f2.features.shaderInt64;
  enable.features.shaderFloat64 = f2.features.shaderFloat64;
  enable.features.shaderInt16 = f2.features.shaderInt16;
  features_.int64 = f2.features.shaderInt64 == VK_TRUE;
  features_.float64 = f2.features.shaderFloat64 == VK_TRUE;
  if (v12) {
    e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
    e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
    e12.shaderInt8 = f12.shaderInt8;
    enable.pNext = &e11;
    e11.pNext = &e12;
    features_.storage8 = f12.storageBuffer8BitAccess == VK_TRUE && f12.shaderInt8 == VK_TRUE;
    features_.storage16 = f11.storageBuffer16BitAccess == VK_TRUE && f2.features.shaderInt16 == VK_TRUE;
  } else {
    e16.storageBuffer16BitAccess = s16.storageBuffer16BitAccess;
    enable.pNext = &e16;
    features_.storage16 = s16.storageBuffer16BitAccess == VK_TRUE && f2.features.shaderInt16 == VK_TRUE;
  }

  // Subgroup operations (core in Vulkan 1.1): which ones compute shaders have, and their width.
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &subgroup;
  api.vkGetPhysicalDeviceProperties2(physical_, &p2);
  features_.subgroup_size = subgroup.subgroupSize;
  features_.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
                                  (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0 &&
                                  (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0;
  features_.subgroup_shuffle = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
                               (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0 &&
                               (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0;

  // Cooperative matrices (tensor cores): the extension, the 16x16x16 f16 configuration, and the
  // features its shaders need. TESSERA_VULKAN_COOPMAT=0 leaves them off (for measuring them).
  VkPhysicalDeviceCooperativeMatrixFeaturesNV ecm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  std::vector<const char*> extensions;
  const char* coopmat_env = std::getenv("TESSERA_VULKAN_COOPMAT");
  if (v12 && f12.shaderFloat16 == VK_TRUE && f12.vulkanMemoryModel == VK_TRUE && features_.storage16 &&
      !(coopmat_env != nullptr && std::string(coopmat_env) == "0") && has_f16_coopmat(instance_, physical_)) {
    ecm.cooperativeMatrix = VK_TRUE;
    e12.shaderFloat16 = VK_TRUE;
    e12.vulkanMemoryModel = VK_TRUE;
    e12.pNext = &ecm;
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    features_.coopmat_f16 = true;
  }

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &enable;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.empty() ? nullptr : extensions.data();
  if (VkResult r = api.vkCreateDevice(physical_, &dci, nullptr, &device_); r != VK_SUCCESS) {
    return fmt::format("vkCreateDevice failed on {}: {}", properties_.deviceName, result_name(r));
  }
  if (std::string e = load_device_functions(device_); !e.empty()) return e;
  api.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = queue_family_;
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  if (VkResult r = api.vkCreateCommandPool(device_, &pci, nullptr, &command_pool_); r != VK_SUCCESS) {
    return fmt::format("vkCreateCommandPool failed: {}", result_name(r));
  }
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = api.vkCreateFence(device_, &fci, nullptr, &fence_); r != VK_SUCCESS) {
    return fmt::format("vkCreateFence failed: {}", result_name(r));
  }
  try {
    memory_ = std::make_unique<VulkanDevice>(*this);
    pipelines_ = std::make_unique<Pipelines>(*this);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string Context::description() const {
  const uint32_t v = properties_.apiVersion;
  return fmt::format("{} ({}), Vulkan {}.{}.{}, device {} of {}", properties_.deviceName,
                     type_name(properties_.deviceType), VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                     VK_API_VERSION_PATCH(v), selected_, physical_count_);
}

VkCommandBuffer Context::new_command_buffer() {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  check(vk().vkAllocateCommandBuffers(device_, &ai, &cb), "vkAllocateCommandBuffers");
  return cb;
}

void Context::reset_commands() { check(vk().vkResetCommandPool(device_, command_pool_, 0), "vkResetCommandPool"); }

void Context::submit_and_wait(VkCommandBuffer commands, const char* what) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &commands;
  check(vk().vkResetFences(device_, 1, &fence_), "vkResetFences");
  if (VkResult r = vk().vkQueueSubmit(queue_, 1, &si, fence_); r != VK_SUCCESS) {
    throw Error(fmt::format("vulkan: vkQueueSubmit ({}) failed: {}", what, result_name(r)));
  }
  if (VkResult r = vk().vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX); r != VK_SUCCESS) {
    throw Error(fmt::format("vulkan: waiting for {} failed: {}", what, result_name(r)));
  }
}

void Context::run_once(const std::function<void(VkCommandBuffer)>& fn, const char* what) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  VkCommandBuffer cb = new_command_buffer();
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vk().vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  // Whatever earlier submissions wrote is visible to these commands, and theirs to later ones.
  VkMemoryBarrier all{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  all.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  all.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  vk().vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &all, 0,
                            nullptr, 0, nullptr);
  fn(cb);
  check(vk().vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  submit_and_wait(cb, what);
  reset_commands();
}

}  // namespace tessera::backends::vulkan
