#include "tessera/backends/cuda/status_words.h"

#include "tessera/backends/cuda/cuda_check.h"

namespace tessera::backends::cuda {

namespace {

constexpr int kSlabWords = 1024;  // one pinned page of 4 KiB

}  // namespace

StatusWords::~StatusWords() {
  for (int32_t* p : device_slabs_) cudaFree(p);
  for (int32_t* p : host_slabs_) cudaFreeHost(p);
}

void StatusWords::grow() {
  int32_t* device = nullptr;
  int32_t* host = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&device), kSlabWords * sizeof(int32_t)), "cudaMalloc (status words)");
  check(cudaMemset(device, 0, kSlabWords * sizeof(int32_t)), "cudaMemset (status words)");
  check(cudaMallocHost(reinterpret_cast<void**>(&host), kSlabWords * sizeof(int32_t)), "cudaMallocHost (status words)");
  device_slabs_.push_back(device);
  host_slabs_.push_back(host);
  for (int i = kSlabWords; i-- > 0;) free_.push_back(slots_ + i);
  slots_ += kSlabWords;
}

StatusWords::Slot StatusWords::acquire(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) grow();
  const int i = free_.back();
  free_.pop_back();
  Slot s{device_slabs_[static_cast<size_t>(i / kSlabWords)] + i % kSlabWords,
         host_slabs_[static_cast<size_t>(i / kSlabWords)] + i % kSlabWords, i};
  // A word released with a flag still raised (an executable dropped before its next run) starts at 0.
  check(cudaMemsetAsync(s.device, 0, sizeof(int32_t), stream), "cudaMemsetAsync (status word)");
  *s.host = 0;
  return s;
}

void StatusWords::release(const Slot& slot) {
  if (slot.index < 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(slot.index);
}

}  // namespace tessera::backends::cuda
