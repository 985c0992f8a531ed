#pragma once
// A CUDA GPU as a tessera::Device: memory from a caching pool over plain cudaMalloc (never managed
// memory), one non-blocking stream that orders all of the device's work, and a pinned host buffer
// through which host copies are staged. The pool reuses freed blocks for later work on the same
// stream, so reuse needs no synchronisation (as PyTorch's caching allocator does on one stream).
#include <cuda_runtime.h>

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/core/device.h"

namespace tessera::backends::cuda {

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int index);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  DeviceType type() const override { return DeviceType::cuda; }
  int index() const override { return index_; }
  std::string description() const override;

  void* allocate(size_t bytes) override;
  void deallocate(void* p, size_t bytes) noexcept override;
  DeviceMemoryStats memory_stats() const override;
  void release_cached();  // returns every cached (free) block to the driver

  void copy_from_host(void* device_dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* device_src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void synchronize() override;

  cudaStream_t stream() const { return stream_; }
  const cudaDeviceProp& properties() const { return props_; }
  int compute_capability() const { return props_.major * 10 + props_.minor; }
  // Makes this device current on the calling thread (the runtime keeps the current device per thread).
  void make_current() const;

 private:
  static size_t rounded(size_t bytes);
  std::string pool_state() const;
  void release_cached_locked();  // release_cached with mutex_ held
  void ensure_staging();         // allocates the pinned staging buffer on first use

  int index_;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;             // cached blocks by size
  std::unordered_map<void*, size_t> block_size_;  // every block the pool holds
  DeviceMemoryStats stats_;
  // Host->device copies go through a ring in pinned memory: a copy returns once queued, and a region
  // is reused only after the copy that read it has finished (its event), so steady-state steps that
  // upload a batch never wait for the GPU.
  struct Staged {
    size_t begin = 0, end = 0;
    cudaEvent_t done = nullptr;
  };
  void* stage(const void* host_src, size_t bytes);  // copies into the ring; returns the region
  void retire_staged();
  void* staging_ = nullptr;
  size_t staging_bytes_ = 0, staging_head_ = 0;
  std::deque<Staged> staged_;
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace tessera::backends::cuda
