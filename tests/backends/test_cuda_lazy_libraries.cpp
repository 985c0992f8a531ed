// cuBLASLt and NVRTC are opened on first use, not linked (tessera/backends/cuda/lazy_library.h). These
// tests need no GPU: they live here rather than in tests/cuda, whose binary skips everything without one.
#include <gtest/gtest.h>

#if defined(TESSERA_HAVE_CUDA)
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <string>

#include "tessera/backends/cuda/lazy_library.h"

namespace tessera::backends::cuda {
namespace {

TEST(CudaLazyLibraries, AMissingLibraryNamesItselfAndEveryPathTried) {
  const LazyLibrary library("libtessera-missing", {"libtessera-missing.so.1", "/nonexistent/libtessera-missing.so.1"});
  EXPECT_FALSE(library.loaded());
  EXPECT_EQ(library.symbol("anything"), nullptr);
  const std::string& error = library.error();
  EXPECT_EQ(error.rfind("libtessera-missing could not be loaded (", 0), 0u) << error;
  EXPECT_NE(error.find("libtessera-missing.so.1: cannot open shared object file"), std::string::npos) << error;
  EXPECT_NE(error.find("/nonexistent/libtessera-missing.so.1: cannot open shared object file"), std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;  // one line, as backend statuses are
}

TEST(CudaLazyLibraries, AFoundLibraryGivesItsSymbols) {
  const LazyLibrary library("libm", {"/nonexistent/libm.so.6", "libm.so.6"});
  ASSERT_TRUE(library.loaded()) << library.error();
  EXPECT_TRUE(library.error().empty());
  EXPECT_NE(library.symbol("cos"), nullptr);
  EXPECT_EQ(library.symbol("tessera_no_such_symbol"), nullptr);
}

// Through the forwarding definitions, as the backend calls them: the real library's answers where it
// loads, otherwise the failure status and, as its text, why it did not load.
TEST(CudaLazyLibraries, CublasLtForwardsOrSaysWhyNot) {
  if (!cublaslt_library().loaded()) {
    EXPECT_EQ(cublasLtGetVersion(), 0u);
    cublasLtHandle_t handle = nullptr;
    const cublasStatus_t status = cublasLtCreate(&handle);
    EXPECT_EQ(status, CUBLAS_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(std::string(cublasLtGetStatusString(status)), cublaslt_library().error());
    return;
  }
  EXPECT_EQ(cublasLtGetVersion() / 10000, size_t{CUBLAS_VER_MAJOR});
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_NOT_INITIALIZED), "CUBLAS_STATUS_NOT_INITIALIZED");
}

TEST(CudaLazyLibraries, NvrtcForwardsOrSaysWhyNot) {
  int major = 0, minor = 0;
  const nvrtcResult status = nvrtcVersion(&major, &minor);
  if (!nvrtc_library().loaded()) {
    EXPECT_EQ(status, NVRTC_ERROR_INTERNAL_ERROR);
    EXPECT_EQ(std::string(nvrtcGetErrorString(status)), nvrtc_library().error());
    return;
  }
  EXPECT_EQ(status, NVRTC_SUCCESS);
  EXPECT_EQ(major, CUDART_VERSION / 1000);
  EXPECT_STREQ(nvrtcGetErrorString(NVRTC_SUCCESS), "NVRTC_SUCCESS");
}

}  // namespace
}  // namespace tessera::backends::cuda
#endif  // TESSERA_HAVE_CUDA
