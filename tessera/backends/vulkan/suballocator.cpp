#include "tessera/backends/vulkan/suballocator.h"

#include <algorithm>

namespace tessera::backends::vulkan {

uint64_t granule_round(uint64_t bytes) { return (std::max<uint64_t>(bytes, 1) + kGranule - 1) / kGranule * kGranule; }

Suballocator::Suballocator(uint64_t size) : size_(granule_round(size)) { insert_free(0, size_); }

void Suballocator::insert_free(uint64_t offset, uint64_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

void Suballocator::erase_free(std::map<uint64_t, uint64_t>::iterator it) {
  auto [lo, hi] = free_by_size_.equal_range(it->second);
  for (auto s = lo; s != hi; ++s) {
    if (s->second == it->first) {
      free_by_size_.erase(s);
      break;
    }
  }
  free_by_offset_.erase(it);
}

uint64_t Suballocator::best_fit(uint64_t bytes) const {
  auto it = free_by_size_.lower_bound(granule_round(bytes));
  return it == free_by_size_.end() ? 0 : it->first;
}

std::optional<uint64_t> Suballocator::allocate(uint64_t bytes) {
  const uint64_t need = granule_round(bytes);
  auto it = free_by_size_.lower_bound(need);
  if (it == free_by_size_.end()) return std::nullopt;
  const uint64_t offset = it->second, size = it->first;
  erase_free(free_by_offset_.find(offset));
  // The rest of the range stays free, after the allocation (so that repeated allocations pack low).
  if (size > need) insert_free(offset + need, size - need);
  used_by_offset_.emplace(offset, need);
  used_ += need;
  return offset;
}

uint64_t Suballocator::free(uint64_t offset) {
  auto used = used_by_offset_.find(offset);
  if (used == used_by_offset_.end()) return 0;
  uint64_t begin = offset, size = used->second;
  const uint64_t freed = size;
  used_by_offset_.erase(used);
  used_ -= freed;
  // Coalesce with the free neighbours on both sides.
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && next->first == begin + size) {
    size += next->second;
    erase_free(next);
  }
  auto after = free_by_offset_.lower_bound(begin);
  if (after != free_by_offset_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      size += prev->second;
      erase_free(prev);
    }
  }
  insert_free(begin, size);
  return freed;
}

uint64_t Suballocator::size_at(uint64_t offset) const {
  auto it = used_by_offset_.find(offset);
  return it == used_by_offset_.end() ? 0 : it->second;
}

uint64_t Suballocator::largest_free() const { return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first; }

}  // namespace tessera::backends::vulkan
