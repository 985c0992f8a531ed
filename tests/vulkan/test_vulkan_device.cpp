// The Vulkan device: memory from the suballocating pool (addresses inside blocks, reuse without new
// blocks, exhaustion as an error naming the size and the pool), transfers through staging, and the
// backend's listing.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "tessera/backends/backend.h"
#include "tessera/backends/vulkan/vulkan_device.h"
#include "tessera/core/error.h"
#include "test_util.h"

namespace tessera::test {
namespace {

backends::vulkan::VulkanDevice& vulkan_device() {
  return dynamic_cast<backends::vulkan::VulkanDevice&>(backends::backend_by_name("vulkan").device());
}

TEST(VulkanDevice, IsListedAvailableWithADescription) {
  backends::Backend& b = backends::backend_by_name("vulkan");
  EXPECT_TRUE(b.available());
  EXPECT_EQ(b.status().rfind("available: ", 0), 0u) << b.status();
  EXPECT_EQ(b.device().type(), DeviceType::vulkan);
  EXPECT_EQ(b.device().name(), "vulkan:0");
  EXPECT_NE(b.device().description().find("Vulkan 1."), std::string::npos) << b.device().description();
}

TEST(VulkanDevice, ArraysRoundTripThroughStagingLargerThanItsBuffer) {
  // 12 MiB: more than the 8 MiB staging buffer, so the copy runs in chunks both ways.
  const int64_t n = 3 << 20;
  Array host = Array::empty(DType::f32, {n});
  float* p = host.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 1000) * 0.5f;
  Array dev = host.to(vulkan_device());
  EXPECT_FALSE(dev.on_host());
  Array back = dev.to(host_device());
  EXPECT_EQ(std::memcmp(back.data<float>(), p, static_cast<size_t>(n) * 4), 0);
  Array copy = Array::empty(DType::f32, {n}, vulkan_device());
  copy.copy_from(dev);  // device -> device
  EXPECT_EQ(std::memcmp(copy.to(host_device()).data<float>(), p, static_cast<size_t>(n) * 4), 0);
}

TEST(VulkanDevice, PoolSuballocatesAndReusesBlocks) {
  auto& dev = vulkan_device();
  std::vector<void*> small;
  for (int i = 0; i < 64; ++i) small.push_back(dev.allocate(4096));
  const size_t blocks = dev.blocks();
  // 64 small arrays fit one block: consecutive allocations share blocks, at distinct addresses.
  for (size_t i = 1; i < small.size(); ++i) EXPECT_NE(small[i], small[i - 1]);
  const auto first = dev.locate(small[0]), second = dev.locate(small[1]);
  EXPECT_EQ(first.buffer, second.buffer) << "small allocations should share a block's buffer";
  EXPECT_EQ(dev.locate(static_cast<std::byte*>(small[0]) + 100).offset, first.offset + 100);
  for (void* p : small) dev.deallocate(p, 4096);
  for (int i = 0; i < 64; ++i) small[static_cast<size_t>(i)] = dev.allocate(4096);
  EXPECT_EQ(dev.blocks(), blocks) << "reallocating what was freed must not grow the pool";
  for (void* p : small) dev.deallocate(p, 4096);
  EXPECT_THROW(dev.locate(reinterpret_cast<void*>(uintptr_t{16})), Error);
}

TEST(VulkanDevice, ExhaustionIsAnErrorNamingTheSizeAndThePool) {
  auto& dev = vulkan_device();
  const auto before = dev.memory_stats();
  dev.set_memory_limit(static_cast<uint64_t>(before.reserved) + (uint64_t{96} << 20));
  try {
    void* p = dev.allocate(size_t{200} << 20);
    dev.deallocate(p, 0);
    ADD_FAILURE() << "a 200 MiB allocation under a 96 MiB headroom should have failed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out of device memory allocating 200.0 MiB (209715200 bytes)"), std::string::npos) << what;
    EXPECT_NE(what.find("pool: "), std::string::npos) << what;
    EXPECT_NE(what.find("limit"), std::string::npos) << what;
  }
  // The pool is still usable after the failure.
  void* p = dev.allocate(1 << 20);
  EXPECT_NE(p, nullptr);
  dev.deallocate(p, 1 << 20);
  dev.set_memory_limit(UINT64_MAX);
}

}  // namespace
}  // namespace tessera::test
