#pragma once
// The Vulkan device as a tessera::Device. Memory comes from a suballocating pool: large VkDeviceMemory
// blocks (device-local, each bound to one storage VkBuffer) split best-fit by a Suballocator, so that
// arrays and arenas cost no driver allocation after warm-up. An array's address is virtual: block k
// occupies [base_k, base_k + size) of a made-up address space, so a Program's byte offsets work as on
// CUDA and locate() turns any address back into (VkBuffer, offset) for a descriptor. Host transfers go
// through one host-visible staging buffer; every transfer waits for the queue (runs are synchronous).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tessera/backends/vulkan/suballocator.h"
#include "tessera/core/device.h"

namespace tessera::backends::vulkan {

class Context;

/// The Vulkan device's memory pool and transfers.
class VulkanDevice final : public Device {
 public:
  /// Reads $TESSERA_VULKAN_MEMORY_LIMIT (bytes the pool may reserve; unset: the device-local heap).
  explicit VulkanDevice(Context& context);
  ~VulkanDevice() override;
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  DeviceType type() const override { return DeviceType::vulkan; }
  std::string description() const override;

  void* allocate(size_t bytes) override;
  void deallocate(void* p, size_t bytes) noexcept override;
  DeviceMemoryStats memory_stats() const override;

  void copy_from_host(void* device_dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* device_src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void synchronize() override {}  // every submission has finished when it returns

  /// Records into `commands` a copy of `bytes` (a few) at `device_src` into the staging buffer, after
  /// the shader writes recorded before it; once the commands have run, read_staged() gives them. A run
  /// reads its status word back this way, without a submission of its own. The caller holds the queue
  /// mutex from recording until it has read them (the staging buffer is shared).
  void record_download(VkCommandBuffer commands, const void* device_src, size_t bytes);
  /// The bytes record_download() staged.
  void read_staged(void* host_dst, size_t bytes);

  /// Where an address (an allocation's start plus any offset inside it) lives.
  struct Location {
    VkBuffer buffer = VK_NULL_HANDLE;
    uint64_t offset = 0;      // in the block's buffer
    uint64_t available = 0;   // bytes from offset to the end of its block
  };
  /// Throws tessera::Error when the address is not inside an allocation of this pool.
  Location locate(const void* address) const;
  /// Frees every block that holds no allocation.
  void release_cached();
  /// "pool: N blocks, X in use of Y reserved (largest free range Z), limit L".
  std::string pool_state() const;
  /// Caps the bytes the pool may reserve (as $TESSERA_VULKAN_MEMORY_LIMIT does); for tests of exhaustion.
  void set_memory_limit(uint64_t bytes);
  /// Blocks the pool holds now.
  size_t blocks() const;
  /// The size of a regular block (larger allocations get a block of their own).
  static constexpr uint64_t kBlockBytes = uint64_t{64} << 20;

 private:
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    uint64_t base = 0;
    Suballocator places;
    explicit Block(uint64_t size) : places(size) {}
  };
  Block* new_block(uint64_t size, VkResult& result);  // null on failure (result says why)
  void destroy_block(Block& b);
  void release_cached_locked();
  std::string pool_state_locked() const;
  void ensure_staging();
  const Block& block_of(uint64_t address) const;

  Context& context_;
  mutable std::mutex mutex_;
  std::map<uint64_t, std::unique_ptr<Block>> blocks_;  // by base address
  uint64_t next_serial_ = 1;
  uint64_t limit_ = 0;  // most bytes the pool may reserve
  uint32_t device_type_index_ = 0, host_type_index_ = 0;
  DeviceMemoryStats stats_;
  VkBuffer staging_ = VK_NULL_HANDLE;
  VkDeviceMemory staging_memory_ = VK_NULL_HANDLE;
  std::byte* staging_map_ = nullptr;
  uint64_t staging_bytes_ = 0;
};

}  // namespace tessera::backends::vulkan
