#include "tessera/backends/vulkan/device_selection.h"

#include <cstdlib>

#include <fmt/format.h>

namespace tessera::backends::vulkan {

namespace {

int preference(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

}  // namespace

int choose_physical_device(const std::vector<VkPhysicalDeviceType>& types, const std::vector<bool>& usable,
                           const char* requested, std::string& why) {
  if (types.empty()) {
    why = "the Vulkan loader found no device (no driver installed, or VK_ICD_FILENAMES names none)";
    return -1;
  }
  if (requested != nullptr && *requested != '\0') {
    char* end = nullptr;
    const long n = std::strtol(requested, &end, 10);
    if (*end != '\0' || n < 0 || n >= static_cast<long>(types.size())) {
      why = fmt::format("TESSERA_VULKAN_DEVICE={} is not a device index (0..{})", requested, types.size() - 1);
      return -1;
    }
    if (!usable[static_cast<size_t>(n)]) {
      why = fmt::format("TESSERA_VULKAN_DEVICE={}: that device has no compute queue", n);
      return -1;
    }
    return static_cast<int>(n);
  }
  int best = -1;
  for (size_t i = 0; i < types.size(); ++i) {
    if (!usable[i]) continue;
    if (best < 0 || preference(types[i]) < preference(types[static_cast<size_t>(best)])) best = static_cast<int>(i);
  }
  if (best < 0) why = "no Vulkan device has a compute queue";
  return best;
}

}  // namespace tessera::backends::vulkan
