// The CUDA device layer: the caching pool, host copies through pinned staging, clear errors for
// out-of-memory and for kernels NVRTC rejects, and the disk cache of compiled kernels.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/backends/cuda/cuda_device.h"
#include "tessera/backends/cuda/nvrtc_compiler.h"
#include "tessera/core/array.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {
namespace {

CudaDevice& gpu() { return dynamic_cast<CudaDevice&>(backend_by_name("cuda").device()); }

TEST(CudaDevice, FreedBlocksAreReusedWithoutNewAllocations) {
  // A size class no other test uses (the pool may cache blocks the earlier tests freed, and best fit
  // would hand out any of them).
  CudaDevice& d = gpu();
  const size_t size = (size_t{37} << 20) + 4096;
  void* a = d.allocate(size);
  const int64_t reserved = d.memory_stats().reserved;
  d.deallocate(a, size);
  void* b = d.allocate(size - 100);  // rounds to the same 2 MiB multiple
  EXPECT_EQ(a, b);
  EXPECT_EQ(d.memory_stats().reserved, reserved);
  d.deallocate(b, size - 100);
}

TEST(CudaDevice, OutOfMemoryNamesTheSizeAndThePool) {
  try {
    gpu().allocate(size_t{1} << 50);
    FAIL() << "a petabyte allocation succeeded";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of memory allocating"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pool:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("free of"), std::string::npos) << msg;
  }
  // The device still works afterwards.
  Array a = Array::from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ(a.to(gpu()).to(host_device()).to_f64(), a.to_f64());
}

TEST(CudaDevice, HostCopiesRoundTripLargerThanTheStagingBuffer) {
  std::vector<float> v(5 << 20);  // 20 MiB: several staging chunks
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 977) * 0.5f;
  const Array host = Array::from_vector(v, {static_cast<int64_t>(v.size())});
  const Array dev = host.to(gpu());
  EXPECT_FALSE(dev.on_host());
  EXPECT_EQ(&dev.device(), &gpu());
  EXPECT_EQ(dev.to(host_device()).to_vector<float>(), v);
}

TEST(CudaDevice, DeviceArraysRefuseHostElementAccess) {
  const Array dev = Array::from_vector<float>({1, 2}, {2}).to(gpu());
  EXPECT_THROW(dev.to_f64(), Error);
}

TEST(CudaCompiler, RejectedSourceIsSavedAndTheLogShown) {
  const std::string dir = ::testing::TempDir() + "/tessera-cuda-cache";
  setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  NvrtcCompiler compiler(gpu().compute_capability());
  try {
    compiler.module("extern \"C\" __global__ void k() { TSR_GRID_PROLOGUE(); undefined_thing(); }", "a broken kernel");
    FAIL() << "NVRTC accepted broken source";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("NVRTC could not compile a broken kernel"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undefined_thing"), std::string::npos) << msg;  // the compiler's log
    const size_t at = msg.find("the source is at ");
    ASSERT_NE(at, std::string::npos) << msg;
    const std::string path = msg.substr(at + 17, msg.find('\n', at) - at - 17);
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
  }
  unsetenv("TESSERA_CACHE_DIR");
}

TEST(CudaCompiler, SecondCompilerLoadsFromTheDiskCache) {
  const std::string dir = ::testing::TempDir() + "/tessera-cuda-cache-hits";
  std::filesystem::remove_all(dir);
  setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  const std::string src = "extern \"C\" __global__ void k(float* x) { TSR_GRID_PROLOGUE(); x[threadIdx.x] += 1.0f; }";
  NvrtcCompiler first(gpu().compute_capability());
  first.module(src, "k");
  EXPECT_EQ(first.stats().compiled, 1);
  NvrtcCompiler second(gpu().compute_capability());
  second.module(src, "k");
  EXPECT_EQ(second.stats().compiled, 0);
  EXPECT_EQ(second.stats().disk_hits, 1);
  unsetenv("TESSERA_CACHE_DIR");
}

}  // namespace
}  // namespace tessera::backends::cuda
