#include "tessera/core/device.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera {

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::cpu:
      return "cpu";
    case DeviceType::cuda:
      return "cuda";
    case DeviceType::vulkan:
      return "vulkan";
  }
  return "?";
}

std::string Device::name() const {
  return is_host() ? std::string("cpu") : fmt::format("{}:{}", device_type_name(type()), index());
}

std::string Device::description() const { return name(); }

namespace {

class HostDevice final : public Device {
  static constexpr size_t kHugePage = size_t{2} << 20, kHugeFrom = size_t{4} << 20;

 public:
  DeviceType type() const override { return DeviceType::cpu; }
  std::string description() const override { return "host memory"; }
  void* allocate(size_t bytes) override {
    // 64-byte alignment suits AVX loads and cache lines. Large buffers (weights repacked at compile
    // time, KV caches, arenas) start on a 2 MiB boundary and their whole 2 MiB stretches go on
    // transparent huge pages where the kernel allows them on request: one fault instead of 512, which
    // a virtual machine makes expensive (a 1B model's repack spent a third of its time in faults), and
    // fewer TLB misses. The tail stays on small pages, so no buffer holds more than it uses.
    const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    const size_t align = bytes >= kHugeFrom ? kHugePage : 64;
    void* p = nullptr;
    TESSERA_CHECK(posix_memalign(&p, align, rounded) == 0 && p != nullptr, "out of memory allocating {} bytes", bytes);
#ifdef MADV_HUGEPAGE
    if (align == kHugePage) madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
    return p;
  }
  void deallocate(void* p, size_t) noexcept override { std::free(p); }
  void copy_from_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_within(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
  void synchronize() override {}
};

}  // namespace

// Never destroyed: arrays held by other static objects are freed through it during exit, in an order
// the language does not fix.
Device& host_device() {
  static HostDevice* host = new HostDevice();
  return *host;
}

}  // namespace tessera
