#pragma once
// Which dispatches of one command buffer need a barrier between them: the byte ranges of each buffer
// written and read since the last barrier. A dispatch that reads or writes a range written since then
// (read-after-write, write-after-write), or writes a range read since then (write-after-read), needs a
// barrier first; independent dispatches run without one. Pure bookkeeping, no Vulkan calls.
#include <cstdint>
#include <vector>

namespace tessera::backends::vulkan {

/// A byte range of one buffer (the buffer is an opaque handle value).
struct ByteRange {
  uint64_t buffer = 0;
  uint64_t begin = 0, end = 0;
  bool overlaps(const ByteRange& o) const { return buffer == o.buffer && begin < o.end && o.begin < end; }
};

/// The ranges touched since the last barrier.
class HazardTracker {
 public:
  /// Whether a dispatch with these reads and writes must wait for the ones recorded since the last barrier.
  bool needs_barrier(const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes) const;
  /// Notes a recorded dispatch.
  void record(const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes);
  /// The ranges written since the last barrier (what the barrier makes visible).
  const std::vector<ByteRange>& pending_writes() const { return writes_; }
  /// A barrier was recorded: nothing is pending.
  void clear();

 private:
  std::vector<ByteRange> reads_, writes_;
};

}  // namespace tessera::backends::vulkan
