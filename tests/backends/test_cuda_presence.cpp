// The CUDA backend is always listed; where it cannot run (no toolkit at build time, no driver or GPU
// here) asking for it fails with one line that says why, and the CPU stays usable.
#include <gtest/gtest.h>

#include <string>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/ops/ops.h"
#include "test_util.h"

namespace tessera::test {
namespace {

TEST(CudaPresence, ListedAndEitherAvailableOrSaysWhyNot) {
  backends::Backend* cuda = backends::find_backend("cuda");
  ASSERT_NE(cuda, nullptr);
  const std::string status = cuda->status();
  EXPECT_EQ(status.find('\n'), std::string::npos) << status;
  if (cuda->available()) {
    EXPECT_EQ(status.rfind("available", 0), 0u) << status;
    EXPECT_FALSE(cuda->devices().empty());
    return;
  }
  EXPECT_TRUE(status.rfind("not available", 0) == 0 || status.rfind("not compiled in", 0) == 0) << status;
  EXPECT_TRUE(cuda->devices().empty());
  try {
    backends::backend_by_name("cuda");
    FAIL() << "an unavailable backend was handed out";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(status), std::string::npos) << msg;
  }
  // The CPU is unaffected.
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] * 2.0}; };
  const auto out = backends::cpu_backend().compile(trace(f, {{DType::f32, {2}}}))->run({Array::from_vector<float>({1, 2}, {2})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 4}));
}

}  // namespace
}  // namespace tessera::test
