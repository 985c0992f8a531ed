#include "tessera/runtime/thread_scratch.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace tessera::runtime {
namespace {

constexpr size_t kSlots = static_cast<size_t>(ScratchSlot::count);

struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { std::free(data); }
};

thread_local std::array<Buffer, kSlots> t_buffers;
std::array<std::atomic<size_t>, kSlots> g_high_water{};
// Counts the raises of any high-water mark. A pool whose threads were grown at the current count has
// nothing new to receive, so reserving again returns at once: every CPU executable reserves after its
// first run, and eager evaluation on the CPU backend makes one executable per evaluation.
std::atomic<uint64_t> g_raises{0};

void grow(Buffer& b, size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::free(b.data);
  b.data = p;
  b.bytes = rounded;
}

void raise_high_water(size_t slot, size_t bytes) {
  size_t seen = g_high_water[slot].load(std::memory_order_relaxed);
  while (bytes > seen) {
    if (g_high_water[slot].compare_exchange_weak(seen, bytes, std::memory_order_relaxed)) {
      g_raises.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
  }
}

}  // namespace

void* thread_scratch(ScratchSlot slot, size_t bytes) {
  const auto s = static_cast<size_t>(slot);
  Buffer& b = t_buffers[s];
  if (bytes > b.bytes || b.data == nullptr) {
    grow(b, bytes == 0 ? 64 : bytes);
    raise_high_water(s, b.bytes);
  }
  return b.data;
}

bool reserve_thread_scratch(ThreadPool& pool) {
  // Read before growing: a raise during the run makes the next reserve run again.
  const uint64_t raises = g_raises.load(std::memory_order_acquire);
  if (pool.scratch_epoch().load(std::memory_order_acquire) == raises) return false;
  pool.run_on_each_thread([](int64_t, int64_t) {
    for (size_t s = 0; s < kSlots; ++s) {
      const size_t want = g_high_water[s].load(std::memory_order_acquire);
      if (want > 0) thread_scratch(static_cast<ScratchSlot>(s), want);
    }
  });
  pool.scratch_epoch().store(raises, std::memory_order_release);
  return true;
}

size_t thread_scratch_high_water(ScratchSlot slot) {
  return g_high_water[static_cast<size_t>(slot)].load(std::memory_order_relaxed);
}

}  // namespace tessera::runtime
