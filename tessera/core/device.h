#pragma once
// Devices: where an Array's memory lives. The host (the CPU's memory) is one device; a GPU backend
// adds its own (cuda:0, vulkan:0). A device allocates and frees memory, copies between itself and the
// host, and orders its work on one stream or queue; synchronize() waits for that work. Arrays carry the
// device their storage lives on, so host code that reads elements can refuse device memory with a
// clear message instead of dereferencing a device pointer (after ggml's buffer/device layering).
#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera {

// The kind of a device: the host (cpu) or a GPU API. A device's name is its type's name plus its index.
enum class DeviceType : uint8_t { cpu, cuda, vulkan };
const char* device_type_name(DeviceType t);  // "cpu", "cuda", "vulkan"

// How much memory a device has handed out, now and at most.
struct DeviceMemoryStats {
  int64_t in_use = 0;     // bytes handed out and not yet returned
  int64_t reserved = 0;   // bytes the device's pool holds (in use or cached)
  int64_t peak = 0;       // the most ever in use
  int64_t capacity = 0;   // the device's memory (0: unknown)
  int64_t allocations = 0;  // allocate() calls so far, from the pool or the driver (0: not counted)
};

// One place memory lives (the host, a GPU): it allocates, copies and orders work.
class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceType type() const = 0;  // which kind of memory and API
  virtual int index() const { return 0; }  // its number among the devices of its type (the 0 of "cuda:0")
  std::string name() const;                 // "cpu", "cuda:0"
  virtual std::string description() const;  // what it is, for `tessera devices`
  bool is_host() const { return type() == DeviceType::cpu; }  // whether host code may dereference its memory

  // Memory. allocate throws tessera::Error naming the size and the pool's state when it cannot.
  virtual void* allocate(size_t bytes) = 0;
  // Returns memory from allocate(bytes) (the same size); pooled devices may keep it cached for reuse.
  virtual void deallocate(void* p, size_t bytes) noexcept = 0;
  virtual DeviceMemoryStats memory_stats() const { return {}; }  // all zero where the device does not count

  // Copies, ordered on the device's stream. copy_to_host returns once the bytes are on the host.
  virtual void copy_from_host(void* device_dst, const void* host_src, size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* device_src, size_t bytes) = 0;  // blocking
  virtual void copy_within(void* dst, const void* src, size_t bytes) = 0;  // both in this device's memory
  virtual void synchronize() = 0;  // waits until all work queued on the device so far has finished
};

// The host: 64-byte aligned heap memory, copies by memcpy.
Device& host_device();

}  // namespace tessera
