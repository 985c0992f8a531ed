// The Vulkan backend's pure bookkeeping, no device needed: best-fit placement in a block, the
// hazards that decide barriers, and which physical device is chosen.
#include <gtest/gtest.h>

#include "tessera/backends/vulkan/device_selection.h"
#include "tessera/backends/vulkan/hazards.h"
#include "tessera/backends/vulkan/suballocator.h"

namespace tessera::backends::vulkan {
namespace {

TEST(VulkanSuballocator, TakesTheSmallestFreeRangeThatFits) {
  Suballocator s(16 * kGranule);
  const uint64_t a = *s.allocate(4 * kGranule), b = *s.allocate(kGranule), c = *s.allocate(2 * kGranule);
  ASSERT_EQ(*s.allocate(kGranule), 7 * kGranule);  // d, so that c's hole stays bounded
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 4 * kGranule);
  EXPECT_EQ(c, 5 * kGranule);
  s.free(a);  // a 4-granule hole at 0
  s.free(c);  // a 2-granule hole at 5
  // Best fit: a 2-granule request takes c's hole, not the larger one at 0 or the tail.
  EXPECT_EQ(s.best_fit(2 * kGranule), 2 * kGranule);
  EXPECT_EQ(*s.allocate(2 * kGranule), 5 * kGranule);
  EXPECT_EQ(*s.allocate(3 * kGranule), 0u);
  EXPECT_EQ(s.used(), 7 * kGranule);
}

TEST(VulkanSuballocator, CoalescesFreedNeighboursAndReportsExhaustion) {
  Suballocator s(8 * kGranule);
  const uint64_t a = *s.allocate(3 * kGranule), b = *s.allocate(3 * kGranule), c = *s.allocate(2 * kGranule);
  EXPECT_FALSE(s.allocate(1).has_value()) << "a full block must refuse";
  EXPECT_EQ(s.best_fit(1), 0u);
  s.free(a);
  s.free(c);
  EXPECT_EQ(s.free_ranges(), 2u);
  EXPECT_FALSE(s.allocate(4 * kGranule).has_value()) << "two 3- and 2-granule holes hold no 4";
  s.free(b);
  EXPECT_EQ(s.free_ranges(), 1u) << "freeing the middle must merge all three";
  EXPECT_EQ(s.largest_free(), 8 * kGranule);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.free(12345), 0u) << "an offset that starts no range frees nothing";
  EXPECT_EQ(granule_round(1), kGranule);
  EXPECT_EQ(granule_round(kGranule + 1), 2 * kGranule);
}

TEST(VulkanHazards, BarriersOnlyBetweenDependentDispatches) {
  HazardTracker h;
  const ByteRange x{1, 0, 64}, y{1, 64, 128}, z{2, 0, 64};
  h.record({x}, {y});                        // reads x, writes y
  EXPECT_FALSE(h.needs_barrier({x}, {z}));   // reads x again, writes another buffer: independent
  EXPECT_TRUE(h.needs_barrier({y}, {z}));    // read after write
  EXPECT_TRUE(h.needs_barrier({}, {y}));     // write after write
  EXPECT_TRUE(h.needs_barrier({}, {x}));     // write after read
  EXPECT_FALSE(h.needs_barrier({{1, 128, 192}}, {})) << "adjacent bytes do not overlap";
  h.clear();
  EXPECT_FALSE(h.needs_barrier({y}, {x}));
  EXPECT_TRUE(h.pending_writes().empty());
}

TEST(VulkanDeviceSelection, PrefersADiscreteGpuAndHonoursTheVariable) {
  const std::vector<VkPhysicalDeviceType> types = {VK_PHYSICAL_DEVICE_TYPE_CPU, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
                                                   VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU};
  std::string why;
  EXPECT_EQ(choose_physical_device(types, {true, true, true}, nullptr, why), 2);
  EXPECT_EQ(choose_physical_device(types, {true, true, false}, "", why), 1) << "a device without compute is skipped";
  EXPECT_EQ(choose_physical_device(types, {true, true, true}, "0", why), 0);
  EXPECT_EQ(choose_physical_device(types, {true, true, true}, "3", why), -1);
  EXPECT_NE(why.find("TESSERA_VULKAN_DEVICE=3 is not a device index (0..2)"), std::string::npos) << why;
  EXPECT_EQ(choose_physical_device(types, {true, true, true}, "x", why), -1);
  EXPECT_EQ(choose_physical_device({}, {}, nullptr, why), -1);
  EXPECT_NE(why.find("no device"), std::string::npos) << why;
}

}  // namespace
}  // namespace tessera::backends::vulkan
