#pragma once
// A CUDA GPU as a tessera::Device: memory from a caching pool over plain cudaMalloc (never managed
// memory), one non-blocking stream that orders all of the device's work, and a pinned host buffer
// through which host copies are staged. The pool reuses freed blocks for later work on the same
// stream, so reuse needs no synchronisation (as PyTorch's caching allocator does on one stream).
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

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

  int index_;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;             // cached blocks by size
  std::unordered_map<void*, size_t> block_size_;  // every block the pool holds
  DeviceMemoryStats stats_;
  void* staging_ = nullptr;  // pinned host memory for copies
  size_t staging_bytes_ = 0;
  bool staging_busy_ = false;  // a staged host->device copy may still read the buffer
};

}  // namespace tessera::backends::cuda
