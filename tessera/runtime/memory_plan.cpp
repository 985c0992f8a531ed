#include "tessera/runtime/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "tessera/core/error.h"

namespace tessera::runtime {
namespace {

int64_t round_up(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// Free blocks below the high-water mark, keyed by offset; neighbours are merged on release.
class Arena {
 public:
  int64_t allocate(int64_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    }
    if (best != free_.end()) {
      const int64_t offset = best->first, remaining = best->second - size;
      free_.erase(best);
      if (remaining > 0) free_.emplace(offset + size, remaining);
      return offset;
    }
    // No block fits: grow the arena, starting inside the free block that touches its end, if any.
    int64_t offset = top_;
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        offset = last->first;
        free_.erase(last);
      }
    }
    top_ = offset + size;
    return offset;
  }

  void release(int64_t offset, int64_t size) {
    auto [it, inserted] = free_.emplace(offset, size);
    TESSERA_CHECK(inserted, "memory plan: block at {} released twice", offset);
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  int64_t top() const { return top_; }

 private:
  std::map<int64_t, int64_t> free_;
  int64_t top_ = 0;
};

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment) {
  TESSERA_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0, "plan_memory: alignment {} is not a power of two",
                alignment);
  const size_t n = requests.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  plan.in_place.assign(n, false);
  int32_t last_step = -1;
  std::vector<int64_t> size(n);
  for (size_t i = 0; i < n; ++i) {
    const BufferRequest& r = requests[i];
    TESSERA_CHECK(r.bytes >= 0 && r.first >= 0 && r.last >= r.first,
                  "plan_memory: request {} has an invalid size or live range ({} bytes, steps {}..{})", i, r.bytes,
                  r.first, r.last);
    size[i] = round_up(r.bytes, alignment);
    plan.requested_bytes += size[i];
    last_step = std::max(last_step, r.last);
  }
  // Per step, the requests born there (in request order) and those that die there.
  std::vector<std::vector<size_t>> born(static_cast<size_t>(last_step + 1)), dying(born.size());
  for (size_t i = 0; i < n; ++i) {
    if (size[i] == 0) continue;
    born[static_cast<size_t>(requests[i].first)].push_back(i);
    dying[static_cast<size_t>(requests[i].last)].push_back(i);
  }
  // A block passes from request to request along in-place chains; block[i] is the size of the block
  // request i holds, and handed_over[i] says it passed it on (so i's death frees nothing).
  std::vector<int64_t> block(n, 0);
  std::vector<bool> handed_over(n, false);
  Arena arena;
  for (size_t s = 0; s < born.size(); ++s) {
    // Births first: a step's outputs must not land on its inputs, which die only after it ran.
    for (size_t i : born[s]) {
      const int32_t from = requests[i].reuse_from;
      const auto u = static_cast<size_t>(from);
      if (from >= 0 && u < i && size[u] > 0 && requests[u].last == requests[i].first && !handed_over[u] &&
          block[u] >= size[i]) {
        plan.offsets[i] = plan.offsets[u];
        block[i] = block[u];
        handed_over[u] = true;
        plan.in_place[i] = true;
      } else {
        plan.offsets[i] = arena.allocate(size[i]);
        block[i] = size[i];
      }
    }
    for (size_t i : dying[s]) {
      if (!handed_over[i]) arena.release(plan.offsets[i], block[i]);
    }
  }
  plan.peak_bytes = arena.top();
  return plan;
}

std::string check_memory_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan, int64_t alignment) {
  const size_t n = requests.size();
  if (plan.offsets.size() != n || plan.in_place.size() != n) return "the plan does not cover every request";
  for (size_t i = 0; i < n; ++i) {
    const int64_t size = round_up(requests[i].bytes, alignment);
    if (plan.offsets[i] % alignment != 0) return fmt::format("request {} is misaligned at {}", i, plan.offsets[i]);
    if (size > 0 && (plan.offsets[i] < 0 || plan.offsets[i] + size > plan.peak_bytes)) {
      return fmt::format("request {} ([{}, {})) lies outside the arena of {} bytes", i, plan.offsets[i],
                         plan.offsets[i] + size, plan.peak_bytes);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const BufferRequest& a = requests[i];
      const BufferRequest& b = requests[j];
      if (a.bytes == 0 || b.bytes == 0) continue;
      if (a.last < b.first || b.last < a.first) continue;  // never alive together
      const int64_t a0 = plan.offsets[i], a1 = a0 + a.bytes, b0 = plan.offsets[j], b1 = b0 + b.bytes;
      if (a1 <= b0 || b1 <= a0) continue;
      // Overlap is allowed only for a hand-over at the one shared step (possibly along a chain).
      const bool hand_over = (a.last == b.first && plan.in_place[j] && b.reuse_from == static_cast<int32_t>(i)) ||
                             (b.last == a.first && plan.in_place[i] && a.reuse_from == static_cast<int32_t>(j));
      if (!hand_over) {
        return fmt::format("requests {} (steps {}..{}, bytes [{}, {})) and {} (steps {}..{}, bytes [{}, {})) overlap",
                           i, a.first, a.last, a0, a1, j, b.first, b.last, b0, b1);
      }
    }
  }
  return "";
}

std::vector<LiveRange> compute_liveness(int32_t num_buffers, const std::vector<StepAccess>& steps,
                                        const std::vector<int32_t>& live_out) {
  std::vector<LiveRange> ranges(static_cast<size_t>(num_buffers));
  auto touch = [&](int32_t b, int32_t step) {
    TESSERA_CHECK(b >= 0 && b < num_buffers, "compute_liveness: buffer {} out of range (have {})", b, num_buffers);
    LiveRange& r = ranges[static_cast<size_t>(b)];
    if (r.first < 0) r.first = step;
    r.last = std::max(r.last, step);
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    const auto step = static_cast<int32_t>(s);
    for (int32_t b : steps[s].writes) touch(b, step);
    for (int32_t b : steps[s].reads) touch(b, step);
  }
  const auto end = static_cast<int32_t>(steps.empty() ? 0 : steps.size() - 1);
  for (int32_t b : live_out) {
    touch(b, end);
    ranges[static_cast<size_t>(b)].last = end;
  }
  return ranges;
}

}  // namespace tessera::runtime
