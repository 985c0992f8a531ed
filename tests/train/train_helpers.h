#pragma once
// Shared by the training tests: a private temporary folder, running programs built next to the test
// binary, and whether the Fashion-MNIST files are installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_runner.h"
#include "tessera/data/idx.h"
#include "test_util.h"

namespace tessera::test {

inline const char* kFashionMnist = "/usr/share/datasets/fashion-mnist";

inline bool fashion_mnist_installed() {
  return std::filesystem::exists(std::filesystem::path(kFashionMnist) / "train-images-idx3-ubyte.gz") ||
         std::filesystem::exists(std::filesystem::path(kFashionMnist) / "train-images-idx3-ubyte");
}

#define REQUIRE_FASHION_MNIST()                                                                 \
  do {                                                                                          \
    if (!::tessera::test::fashion_mnist_installed()) {                                          \
      GTEST_SKIP() << "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; \
    }                                                                                           \
  } while (0)

// A fresh folder, removed with everything in it at the end of the scope.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("tessera_train_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Runs a program that CMake builds next to this test binary, inside `cwd`.
inline CliResult run_sibling(const std::string& program, const std::string& args, const TempDir& cwd) {
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe").parent_path() / program;
  CliResult r;
  if (!std::filesystem::exists(exe)) {
    r.err = exe.string() + " was not built";
    return r;
  }
  const std::string out_file = cwd / "stdout.txt", err_file = cwd / "stderr.txt";
  const std::string command = "cd " + shell_quote(cwd.path().string()) + " && " + shell_quote(exe.string()) + " " +
                              args + " >" + shell_quote(out_file) + " 2>" + shell_quote(err_file) + " </dev/null";
  const int status = std::system(command.c_str());
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = read_file(out_file);
  r.err = read_file(err_file);
  return r;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A miniature Fashion-MNIST folder (gzip'd IDX files) with n_train and n_test images: pixel p of image i
// is (7 i + p) % 256, label i % 10. Either count may be 0.
inline void write_tiny_fashion_mnist(const std::filesystem::path& dir, int64_t n_train, int64_t n_test) {
  std::filesystem::create_directories(dir);
  for (const auto& [prefix, n] : {std::pair<std::string, int64_t>{"train", n_train}, {"t10k", n_test}}) {
    std::vector<uint8_t> px(static_cast<size_t>(n * 784)), labels(static_cast<size_t>(n));
    for (size_t k = 0; k < px.size(); ++k) px[k] = static_cast<uint8_t>((7 * (k / 784) + k % 784) % 256);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<uint8_t>(i % 10);
    data::write_idx((dir / (prefix + "-images-idx3-ubyte.gz")).string(), Array::from_vector(px, {n, 28, 28}), true);
    data::write_idx((dir / (prefix + "-labels-idx1-ubyte.gz")).string(), Array::from_vector(labels, {n}), true);
  }
}

}  // namespace tessera::test
