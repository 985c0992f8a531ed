// Without a usable Vulkan device every test of this binary is skipped, with one message that says why
// (CI runs them on Mesa's lavapipe). The missing-driver test's child process (TESSERA_VULKAN_CHILD=1)
// runs without a device on purpose, so there nothing is skipped.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tessera/backends/backend.h"

namespace {

class VulkanEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    if (const char* child = std::getenv("TESSERA_VULKAN_CHILD"); child != nullptr && *child == '1') return;
    tessera::backends::Backend* vulkan = tessera::backends::find_backend("vulkan");
    if (vulkan == nullptr || !vulkan->available()) {
      GTEST_SKIP() << "Vulkan tests skipped: the vulkan backend is "
                   << (vulkan == nullptr ? "not compiled in" : vulkan->status())
                   << " (install mesa-vulkan-drivers for lavapipe)";
    }
  }
};

const ::testing::Environment* const kVulkan = ::testing::AddGlobalTestEnvironment(new VulkanEnvironment);

}  // namespace
