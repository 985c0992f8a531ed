// Every graph the fuzzer ever found failing (tests/fuzz_graphs/regressions/*.tsr, shrunk and with its
// input data) runs on every variant of the CPU backend and must agree with the reference backend.
#include <gtest/gtest.h>

#include <filesystem>

#include "tessera/testing/graph_fuzz/fuzz_driver.h"

namespace tessera::testing::fuzz {
namespace {

std::vector<std::string> regression_files() {
  std::vector<std::string> files;
  const std::filesystem::path dir = std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/fuzz_graphs/regressions";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".tsr") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(GraphFuzzRegressions, EveryFileReplaysCleanOnTheCpuBackend) {
  const std::vector<std::string> files = regression_files();
  ASSERT_FALSE(files.empty()) << "no regression files found";
  const BackendUnderTest cpu = backend_under_test("cpu");
  for (const std::string& path : files) {
    const Regression r = read_regression_file(path);
    EXPECT_EQ(replay(r.c, cpu), "") << path;
  }
}

}  // namespace
}  // namespace tessera::testing::fuzz
