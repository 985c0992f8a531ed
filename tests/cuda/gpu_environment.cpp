// Without a usable GPU every test of this binary is skipped, with one message that says why (CI has
// no GPU; scripts/device/cuda_suite.sh runs the suite on one).
#include <gtest/gtest.h>

#include "tessera/backends/backend.h"

namespace {

class GpuEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    tessera::backends::Backend* cuda = tessera::backends::find_backend("cuda");
    if (cuda == nullptr || !cuda->available()) {
      GTEST_SKIP() << "CUDA tests skipped: the cuda backend is "
                   << (cuda == nullptr ? "not compiled in" : cuda->status())
                   << " (run scripts/device/cuda_suite.sh on a GPU machine)";
    }
  }
};

const ::testing::Environment* const kGpu = ::testing::AddGlobalTestEnvironment(new GpuEnvironment);

}  // namespace
