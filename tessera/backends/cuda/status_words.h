#pragma once
// The status words of CUDA executables (the index-error and Adam-step flags a run raises on the
// device and reports at a later run): slots of one device slab and one pinned host slab per GPU,
// made once, instead of a device allocation, a pinned allocation and a copy per executable
// (cudaMallocHost alone costs a compile from the kernel cache about half a millisecond).
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace tessera::backends::cuda {

class StatusWords {
 public:
  struct Slot {
    int32_t* device = nullptr;  // zero between runs that raise nothing
    int32_t* host = nullptr;    // pinned: the device word copied back after a run
    int index = -1;
  };

  StatusWords() = default;
  ~StatusWords();
  StatusWords(const StatusWords&) = delete;
  StatusWords& operator=(const StatusWords&) = delete;

  // A slot whose words are zero (the device one zeroed on `stream` before anything later on it).
  Slot acquire(cudaStream_t stream);
  void release(const Slot& slot);

 private:
  void grow();

  std::mutex mutex_;
  std::vector<int32_t*> device_slabs_, host_slabs_;
  std::vector<int> free_;
  int slots_ = 0;
};

}  // namespace tessera::backends::cuda
