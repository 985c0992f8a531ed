#include "tessera/backends/vulkan/vulkan_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/vulkan_api.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

constexpr uint64_t kStagingBytes = uint64_t{8} << 20;
constexpr int kAddressShift = 40;  // block k starts at k << 40: no allocation reaches the next block

std::string mib(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

// The first memory type allowed by `bits` with all of `wanted`, else the first with `fallback`.
uint32_t memory_type(const VkPhysicalDeviceMemoryProperties& p, uint32_t bits, VkMemoryPropertyFlags wanted,
                     VkMemoryPropertyFlags fallback) {
  for (VkMemoryPropertyFlags want : {wanted, fallback}) {
    for (uint32_t i = 0; i < p.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) != 0 && (p.memoryTypes[i].propertyFlags & want) == want) return i;
    }
  }
  throw Error("vulkan: the device has no memory type for storage buffers");
}

VkBuffer make_buffer(VkDevice device, uint64_t size) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer b = VK_NULL_HANDLE;
  check(vk().vkCreateBuffer(device, &bi, nullptr, &b), "vkCreateBuffer");
  return b;
}

}  // namespace

VulkanDevice::VulkanDevice(Context& context) : context_(context) {
  const VkPhysicalDeviceMemoryProperties& mp = context_.memory_properties();
  VkBuffer probe = make_buffer(context_.vk_device(), kGranule);
  VkMemoryRequirements req{};
  vk().vkGetBufferMemoryRequirements(context_.vk_device(), probe, &req);
  vk().vkDestroyBuffer(context_.vk_device(), probe, nullptr);
  device_type_index_ = memory_type(mp, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  host_type_index_ = memory_type(mp, req.memoryTypeBits,
                                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  const uint32_t heap = mp.memoryTypes[device_type_index_].heapIndex;
  stats_.capacity = static_cast<int64_t>(mp.memoryHeaps[heap].size);
  limit_ = static_cast<uint64_t>(stats_.capacity);
  if (const char* env = std::getenv("TESSERA_VULKAN_MEMORY_LIMIT"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    TESSERA_CHECK(*end == '\0' && v > 0, "TESSERA_VULKAN_MEMORY_LIMIT={} is not a byte count", env);
    limit_ = std::min<uint64_t>(limit_, v);
  }
}

VulkanDevice::~VulkanDevice() {
  for (auto& [base, b] : blocks_) destroy_block(*b);
  if (staging_map_ != nullptr) vk().vkUnmapMemory(context_.vk_device(), staging_memory_);
  if (staging_ != VK_NULL_HANDLE) vk().vkDestroyBuffer(context_.vk_device(), staging_, nullptr);
  if (staging_memory_ != VK_NULL_HANDLE) vk().vkFreeMemory(context_.vk_device(), staging_memory_, nullptr);
}

std::string VulkanDevice::description() const { return context_.description(); }

VulkanDevice::Block* VulkanDevice::new_block(uint64_t size, VkResult& result) {
  if (static_cast<uint64_t>(stats_.reserved) + size > limit_) {
    result = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    return nullptr;
  }
  auto b = std::make_unique<Block>(size);
  const VkDevice device = context_.vk_device();
  b->buffer = make_buffer(device, size);
  VkMemoryRequirements req{};
  vk().vkGetBufferMemoryRequirements(device, b->buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = device_type_index_;
  result = vk().vkAllocateMemory(device, &ai, nullptr, &b->memory);
  if (result != VK_SUCCESS) {
    vk().vkDestroyBuffer(device, b->buffer, nullptr);
    return nullptr;
  }
  check(vk().vkBindBufferMemory(device, b->buffer, b->memory, 0), "vkBindBufferMemory");
  b->base = next_serial_++ << kAddressShift;
  stats_.reserved += static_cast<int64_t>(size);
  Block* raw = b.get();
  blocks_.emplace(raw->base, std::move(b));
  return raw;
}

void VulkanDevice::destroy_block(Block& b) {
  vk().vkDestroyBuffer(context_.vk_device(), b.buffer, nullptr);
  vk().vkFreeMemory(context_.vk_device(), b.memory, nullptr);
}

void* VulkanDevice::allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t need = granule_round(bytes);
  stats_.allocations += 1;
  // Best fit over every block: the smallest free range that holds the allocation.
  Block* best = nullptr;
  uint64_t best_size = 0;
  for (auto& [base, b] : blocks_) {
    const uint64_t fit = b->places.best_fit(need);
    if (fit != 0 && (best == nullptr || fit < best_size)) {
      best = b.get();
      best_size = fit;
    }
  }
  if (best == nullptr) {
    const uint64_t size = std::max(kBlockBytes, need);
    VkResult result = VK_SUCCESS;
    best = new_block(size, result);
    if (best == nullptr) {
      // Empty blocks of other sizes may be what stands in the way: give them back and try once more.
      release_cached_locked();
      best = new_block(size, result);
      // Near the limit a block only as large as the allocation may still fit.
      if (best == nullptr && need < size) best = new_block(need, result);
    }
    if (best == nullptr) {
      throw Error(fmt::format("vulkan:0: out of device memory allocating {} ({} bytes): {}; {}", mib(need), bytes,
                              result_name(result), pool_state_locked()));
    }
  }
  const uint64_t offset = *best->places.allocate(need);
  stats_.in_use += static_cast<int64_t>(need);
  stats_.peak = std::max(stats_.peak, stats_.in_use);
  return reinterpret_cast<void*>(best->base + offset);
}

void VulkanDevice::deallocate(void* p, size_t) noexcept {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto address = reinterpret_cast<uint64_t>(p);
  auto it = blocks_.upper_bound(address);
  if (it == blocks_.begin()) return;  // not the pool's: nothing sensible to do in a noexcept path
  --it;
  stats_.in_use -= static_cast<int64_t>(it->second->places.free(address - it->first));
}

void VulkanDevice::set_memory_limit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = std::min<uint64_t>(bytes, static_cast<uint64_t>(stats_.capacity));
}

size_t VulkanDevice::blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.size();
}

void VulkanDevice::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

void VulkanDevice::release_cached_locked() {
  for (auto it = blocks_.begin(); it != blocks_.end();) {
    if (it->second->places.empty()) {
      stats_.reserved -= static_cast<int64_t>(it->second->places.size());
      destroy_block(*it->second);
      it = blocks_.erase(it);
    } else {
      ++it;
    }
  }
}

DeviceMemoryStats VulkanDevice::memory_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string VulkanDevice::pool_state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pool_state_locked();
}

std::string VulkanDevice::pool_state_locked() const {
  uint64_t largest = 0;
  for (const auto& [base, b] : blocks_) largest = std::max(largest, b->places.largest_free());
  return fmt::format("pool: {} block{}, {} in use of {} reserved (largest free range {}), peak {}, limit {}",
                     blocks_.size(), blocks_.size() == 1 ? "" : "s", mib(static_cast<uint64_t>(stats_.in_use)),
                     mib(static_cast<uint64_t>(stats_.reserved)), mib(largest), mib(static_cast<uint64_t>(stats_.peak)),
                     mib(limit_));
}

const VulkanDevice::Block& VulkanDevice::block_of(uint64_t address) const {
  auto it = blocks_.upper_bound(address);
  if (it != blocks_.begin()) {
    --it;
    if (address < it->first + it->second->places.size()) return *it->second;
  }
  throw Error(fmt::format("vulkan: address {:#x} is not in the device's memory pool (an array of another device?)",
                          address));
}

VulkanDevice::Location VulkanDevice::locate(const void* address) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto a = reinterpret_cast<uint64_t>(address);
  const Block& b = block_of(a);
  Location l;
  l.buffer = b.buffer;
  l.offset = a - b.base;
  l.available = b.places.size() - l.offset;
  return l;
}

void VulkanDevice::ensure_staging() {
  if (staging_ != VK_NULL_HANDLE) return;
  const VkDevice device = context_.vk_device();
  staging_ = make_buffer(device, kStagingBytes);
  VkMemoryRequirements req{};
  vk().vkGetBufferMemoryRequirements(device, staging_, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = host_type_index_;
  check(vk().vkAllocateMemory(device, &ai, nullptr, &staging_memory_), "vkAllocateMemory (staging buffer)");
  check(vk().vkBindBufferMemory(device, staging_, staging_memory_, 0), "vkBindBufferMemory (staging buffer)");
  void* map = nullptr;
  check(vk().vkMapMemory(device, staging_memory_, 0, VK_WHOLE_SIZE, 0, &map), "vkMapMemory (staging buffer)");
  staging_map_ = static_cast<std::byte*>(map);
  staging_bytes_ = kStagingBytes;
}

void VulkanDevice::copy_from_host(void* device_dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::recursive_mutex> queue(context_.queue_mutex());
  ensure_staging();
  const Location dst = locate(device_dst);
  TESSERA_CHECK(dst.available >= bytes, "vulkan: a {}-byte upload runs past its allocation", bytes);
  const auto* src = static_cast<const std::byte*>(host_src);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min<uint64_t>(staging_bytes_, bytes - done);
    std::memcpy(staging_map_, src + done, n);
    context_.run_once(
        [&](VkCommandBuffer cb) {
          VkBufferCopy region{0, dst.offset + done, n};
          vk().vkCmdCopyBuffer(cb, staging_, dst.buffer, 1, &region);
        },
        "host->device copy");
    done += n;
  }
}

void VulkanDevice::copy_to_host(void* host_dst, const void* device_src, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::recursive_mutex> queue(context_.queue_mutex());
  ensure_staging();
  const Location src = locate(device_src);
  TESSERA_CHECK(src.available >= bytes, "vulkan: a {}-byte download runs past its allocation", bytes);
  auto* dst = static_cast<std::byte*>(host_dst);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min<uint64_t>(staging_bytes_, bytes - done);
    context_.run_once(
        [&](VkCommandBuffer cb) {
          VkBufferCopy region{src.offset + done, 0, n};
          vk().vkCmdCopyBuffer(cb, src.buffer, staging_, 1, &region);
          VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
          to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
          to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
          vk().vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                                    nullptr, 0, nullptr);
        },
        "device->host copy");
    std::memcpy(dst + done, staging_map_, n);
    done += n;
  }
}

void VulkanDevice::record_download(VkCommandBuffer commands, const void* device_src, size_t bytes) {
  ensure_staging();
  TESSERA_CHECK(bytes <= staging_bytes_, "vulkan: a recorded download of {} bytes (at most {})", bytes, staging_bytes_);
  const Location src = locate(device_src);
  VkMemoryBarrier from_shaders{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  from_shaders.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  from_shaders.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vk().vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                            &from_shaders, 0, nullptr, 0, nullptr);
  VkBufferCopy region{src.offset, 0, bytes};
  vk().vkCmdCopyBuffer(commands, src.buffer, staging_, 1, &region);
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk().vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                            nullptr, 0, nullptr);
}

void VulkanDevice::read_staged(void* host_dst, size_t bytes) { std::memcpy(host_dst, staging_map_, bytes); }

void VulkanDevice::copy_within(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  const Location s = locate(src), d = locate(dst);
  TESSERA_CHECK(s.available >= bytes && d.available >= bytes, "vulkan: a {}-byte device copy runs past its allocation",
                bytes);
  context_.run_once(
      [&](VkCommandBuffer cb) {
        VkBufferCopy region{s.offset, d.offset, bytes};
        vk().vkCmdCopyBuffer(cb, s.buffer, d.buffer, 1, &region);
      },
      "device->device copy");
}

}  // namespace tessera::backends::vulkan
