#pragma once
// Best-fit placement of allocations inside one large block of device memory (a VkDeviceMemory bound to
// one VkBuffer). Pure bookkeeping, no Vulkan: offsets and sizes are multiples of kGranule, free ranges
// coalesce with their neighbours when freed, and the smallest free range that fits is taken.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tessera::backends::vulkan {

/// Placement granule: every offset and size is a multiple of it (covers minStorageBufferOffsetAlignment
/// and nonCoherentAtomSize of the devices seen: 16 to 256 bytes).
inline constexpr uint64_t kGranule = 256;

/// Rounds `bytes` (at least 1) up to the granule.
uint64_t granule_round(uint64_t bytes);

/// The free and used ranges of one block.
class Suballocator {
 public:
  /// A block of `size` bytes (a multiple of kGranule), all free.
  explicit Suballocator(uint64_t size);
  /// The offset of a fresh range of granule_round(bytes), best fit; nothing when no free range fits.
  std::optional<uint64_t> allocate(uint64_t bytes);
  /// The size of the free range allocate(bytes) would take (0: none fits), to choose between blocks.
  uint64_t best_fit(uint64_t bytes) const;
  /// Frees the range at `offset`; returns its size (0 when no range starts there).
  uint64_t free(uint64_t offset);
  /// The size of the used range at `offset` (0: none).
  uint64_t size_at(uint64_t offset) const;
  /// The block's size, bytes in use, the largest free range, and the number of free ranges.
  uint64_t size() const { return size_; }
  uint64_t used() const { return used_; }
  uint64_t largest_free() const;
  size_t free_ranges() const { return free_by_offset_.size(); }
  bool empty() const { return used_ == 0; }

 private:
  void insert_free(uint64_t offset, uint64_t size);
  void erase_free(std::map<uint64_t, uint64_t>::iterator it);

  uint64_t size_ = 0, used_ = 0;
  std::map<uint64_t, uint64_t> free_by_offset_;  // offset -> size
  std::multimap<uint64_t, uint64_t> free_by_size_;  // size -> offset
  std::map<uint64_t, uint64_t> used_by_offset_;  // offset -> size
};

}  // namespace tessera::backends::vulkan
