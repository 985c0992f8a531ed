// No Vulkan driver: the backend says why in one line, compiling for it is a clear error, and the CPU
// keeps working. The check runs in a child process (this binary, filtered to the Tool test below)
// with VK_ICD_FILENAMES naming a file that does not exist, so the loader finds no driver.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/ops/ops.h"
#include "test_util.h"

namespace tessera::test {
namespace {

std::string run_child(const std::string& env) {
  std::array<char, 4096> self{};
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return "(cannot find this test binary)";
  const std::string cmd = env + " TESSERA_VULKAN_CHILD=1 '" + std::string(self.data(), static_cast<size_t>(n)) +
                          "' --gtest_filter=ToolVulkanMissingDriver.* --gtest_also_run_disabled_tests 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "(popen failed)";
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = pclose(p);
  out += "\nexit status " + std::to_string(status);
  return out;
}

TEST(VulkanMissingDriver, BackendUnavailableWithAReasonAndTheCpuStillRuns) {
  const std::string out = run_child("VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json");
  EXPECT_NE(out.find("vulkan status: not available: "), std::string::npos) << out;
  EXPECT_NE(out.find("compile error: vulkan backend: not available"), std::string::npos) << out;
  EXPECT_NE(out.find("cpu result ok"), std::string::npos) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

TEST(VulkanMissingDriver, DeviceIndexOutOfRangeIsNamed) {
  const std::string out = run_child("TESSERA_VULKAN_DEVICE=99");
  EXPECT_NE(out.find("TESSERA_VULKAN_DEVICE=99 is not a device index"), std::string::npos) << out;
}

// Run only as the child above.
TEST(ToolVulkanMissingDriver, Report) {
  if (const char* child = std::getenv("TESSERA_VULKAN_CHILD"); child == nullptr || *child != '1') {
    GTEST_SKIP() << "run by VulkanMissingDriver.* as a child process";
  }
  backends::Backend* vk = backends::find_backend("vulkan");
  ASSERT_NE(vk, nullptr);
  EXPECT_FALSE(vk->available());
  std::printf("vulkan status: %s\n", vk->status().c_str());
  EXPECT_EQ(vk->status().find('\n'), std::string::npos) << "the status is one line";
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::exp(a[0]) + 1.0}; };
  const ir::Graph g = trace(f, {{DType::f32, {4}}});
  try {
    vk->compile(g);
    ADD_FAILURE() << "compiling for an unavailable backend should throw";
  } catch (const Error& e) {
    std::printf("compile error: %s\n", e.what());
  }
  const auto got = backends::backend_by_name("cpu").compile(g)->run({Array::from_vector<float>({0, 1, 2, 3}, {4})});
  const auto want = backends::reference_backend().compile(g)->run({Array::from_vector<float>({0, 1, 2, 3}, {4})});
  expect_close(Tensor::from_array(got[0]), want[0].to_f64(), 1e-6, 1e-6);
  if (!::testing::Test::HasFailure()) std::printf("cpu result ok\n");
}

}  // namespace
}  // namespace tessera::test
