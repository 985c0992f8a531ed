#include "tessera/backends/cuda/cuda_device.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace {

constexpr size_t kStagingBytes = size_t{8} << 20;

std::string mib(int64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

CudaDevice::CudaDevice(int index) : index_(index) {
  check(cudaGetDeviceProperties(&props_, index), "cudaGetDeviceProperties");
  make_current();
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stats_.capacity = static_cast<int64_t>(props_.totalGlobalMem);
}

CudaDevice::~CudaDevice() {
  // The process may be exiting with the driver already shut down: errors here are ignored.
  cudaSetDevice(index_);
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  release_cached();
  for (const Staged& s : staged_) cudaEventDestroy(s.done);
  for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
  if (staging_ != nullptr) cudaFreeHost(staging_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void CudaDevice::make_current() const { check(cudaSetDevice(index_), "cudaSetDevice"); }

std::string CudaDevice::description() const {
  return fmt::format("{}, compute capability {}.{}, {} multiprocessors, {}", props_.name, props_.major,
                     props_.minor, props_.multiProcessorCount, mib(static_cast<int64_t>(props_.totalGlobalMem)));
}

// Small blocks in 512-byte steps; larger ones in 2 MiB steps, so that blocks of nearby sizes are
// interchangeable and the pool does not fragment into many one-off sizes.
size_t CudaDevice::rounded(size_t bytes) {
  const size_t b = std::max<size_t>(bytes, 1);
  if (b < (size_t{1} << 20)) return (b + 511) / 512 * 512;
  return (b + (size_t{2} << 20) - 1) / (size_t{2} << 20) * (size_t{2} << 20);
}

std::string CudaDevice::pool_state() const {
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  return fmt::format("pool: {} in use, {} reserved (cached {}), peak {}; device: {} free of {}", mib(stats_.in_use),
                     mib(stats_.reserved), mib(stats_.reserved - stats_.in_use), mib(stats_.peak),
                     mib(static_cast<int64_t>(free_bytes)), mib(static_cast<int64_t>(total_bytes)));
}

void* CudaDevice::allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t size = rounded(bytes);
  stats_.allocations += 1;
  // Best fit among cached blocks, but never a block more than twice the size (it would strand memory).
  auto it = free_.lower_bound(size);
  if (it != free_.end() && it->first <= 2 * size) {
    void* p = it->second;
    stats_.in_use += static_cast<int64_t>(it->first);
    free_.erase(it);
    stats_.peak = std::max(stats_.peak, stats_.in_use);
    return p;
  }
  make_current();
  void* p = nullptr;
  cudaError_t status = cudaMalloc(&p, size);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    // Cached blocks of other sizes may be what stands in the way: give them back and try once more.
    release_cached_locked();
    status = cudaMalloc(&p, size);
  }
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw Error(fmt::format("cuda:{}: out of memory allocating {} ({} bytes): {}; {}", index_, mib(static_cast<int64_t>(size)),
                            bytes, cudaGetErrorString(status), pool_state()));
  }
  block_size_[p] = size;
  stats_.reserved += static_cast<int64_t>(size);
  stats_.in_use += static_cast<int64_t>(size);
  stats_.peak = std::max(stats_.peak, stats_.in_use);
  return p;
}

void CudaDevice::deallocate(void* p, size_t) noexcept {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = block_size_.find(p);
  if (it == block_size_.end()) return;  // not the pool's: nothing sensible to do in a noexcept path
  stats_.in_use -= static_cast<int64_t>(it->second);
  free_.emplace(it->second, p);
}

void CudaDevice::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

void CudaDevice::release_cached_locked() {
  for (auto& [bytes, block] : free_) {
    cudaFree(block);
    block_size_.erase(block);
    stats_.reserved -= static_cast<int64_t>(bytes);
  }
  free_.clear();
}

DeviceMemoryStats CudaDevice::memory_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

// Host copies go through the pinned staging ring in chunks: the copy engine reads pinned memory
// directly, and a host->device copy returns once its last chunk is queued.
void CudaDevice::ensure_staging() {
  if (staging_ != nullptr) return;
  check(cudaMallocHost(&staging_, kStagingBytes), "cudaMallocHost (staging buffer)");
  staging_bytes_ = kStagingBytes;
}

void* CudaDevice::stage(const void* host_src, size_t bytes) {
  ensure_staging();
  if (staging_head_ + bytes > staging_bytes_) staging_head_ = 0;
  const size_t begin = staging_head_, end = begin + bytes;
  // Wait for the copies still reading this region (oldest first), and only for those.
  for (auto it = staged_.begin(); it != staged_.end();) {
    if (it->begin < end && begin < it->end) {
      check(cudaEventSynchronize(it->done), "cudaEventSynchronize (staging buffer reuse)");
      spare_events_.push_back(it->done);
      it = staged_.erase(it);
    } else {
      ++it;
    }
  }
  auto* region = static_cast<std::byte*>(staging_) + begin;
  std::memcpy(region, host_src, bytes);
  staging_head_ = end;
  return region;
}

void CudaDevice::copy_from_host(void* device_dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return;
  make_current();
  auto* dst = static_cast<std::byte*>(device_dst);
  const auto* src = static_cast<const std::byte*>(host_src);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kStagingBytes / 2, bytes - done);
    void* region = stage(src + done, n);
    check(cudaMemcpyAsync(dst + done, region, n, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync host->device");
    cudaEvent_t done_event = nullptr;
    if (!spare_events_.empty()) {
      done_event = spare_events_.back();
      spare_events_.pop_back();
    } else {
      check(cudaEventCreateWithFlags(&done_event, cudaEventDisableTiming), "cudaEventCreate (staging)");
    }
    check(cudaEventRecord(done_event, stream_), "cudaEventRecord (staging)");
    const size_t begin = static_cast<size_t>(static_cast<std::byte*>(region) - static_cast<std::byte*>(staging_));
    staged_.push_back({begin, begin + n, done_event});
    done += n;
  }
}

void CudaDevice::copy_to_host(void* host_dst, const void* device_src, size_t bytes) {
  if (bytes == 0) return;
  make_current();
  ensure_staging();
  auto* dst = static_cast<std::byte*>(host_dst);
  const auto* src = static_cast<const std::byte*>(device_src);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(staging_bytes_, bytes - done);
    check(cudaMemcpyAsync(staging_, src + done, n, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync device->host");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (device->host copy)");
    retire_staged();
    std::memcpy(dst + done, staging_, n);
    done += n;
  }
}

void CudaDevice::copy_within(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync device->device");
}

void CudaDevice::synchronize() {
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  retire_staged();
}

// After the stream is idle every staged copy has finished: their events go back to the spares.
void CudaDevice::retire_staged() {
  for (const Staged& s : staged_) spare_events_.push_back(s.done);
  staged_.clear();
}

}  // namespace tessera::backends::cuda
