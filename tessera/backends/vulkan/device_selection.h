#pragma once
// Which physical device the backend takes: $TESSERA_VULKAN_DEVICE=N when set (an index into the
// loader's list), else the first discrete GPU, then integrated, virtual, CPU (lavapipe), other.
#include <vulkan/vulkan.h>

#include <string>
#include <vector>

namespace tessera::backends::vulkan {

/// The index to use among devices of `types` (those with a compute queue; `usable[i]` false for the
/// others), or -1 with `why` set. `requested` is $TESSERA_VULKAN_DEVICE (null or "" when unset).
int choose_physical_device(const std::vector<VkPhysicalDeviceType>& types, const std::vector<bool>& usable,
                           const char* requested, std::string& why);

}  // namespace tessera::backends::vulkan
