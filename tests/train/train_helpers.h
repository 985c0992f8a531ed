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

#include "cli/cli_runner.h"
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

}  // namespace tessera::test
