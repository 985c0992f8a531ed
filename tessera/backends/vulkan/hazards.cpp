#include "tessera/backends/vulkan/hazards.h"

namespace tessera::backends::vulkan {

namespace {

bool any_overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a) {
    for (const ByteRange& y : b) {
      if (x.overlaps(y)) return true;
    }
  }
  return false;
}

}  // namespace

bool HazardTracker::needs_barrier(const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes) const {
  return any_overlap(reads, writes_) || any_overlap(writes, writes_) || any_overlap(writes, reads_);
}

void HazardTracker::record(const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes) {
  reads_.insert(reads_.end(), reads.begin(), reads.end());
  writes_.insert(writes_.end(), writes.begin(), writes.end());
}

void HazardTracker::clear() {
  reads_.clear();
  writes_.clear();
}

}  // namespace tessera::backends::vulkan
