#pragma once
// Runs the built `tessera` executable (found next to this test binary: CMake puts both in the build
// folder) in a private temporary folder and captures its exit code, stdout and stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tessera::test {

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string out;
  std::string err;
};

inline std::filesystem::path cli_binary() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "tessera";
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Single-quotes a word for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// A fresh folder per fixture instance; tests run in parallel under ctest.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(std::filesystem::exists(cli_binary()))
        << "the tessera executable was not found at " << cli_binary() << "; build the tessera_cli target first";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path path(const std::string& name) const { return dir_ / name; }

  // `args` is passed to the shell as written (quote paths with shell_quote); `stdin_file` feeds stdin;
  // `env` (e.g. "TESSERA_CC=/x") goes before the program.
  CliResult run(const std::string& args, const std::string& stdin_file = "", const std::string& env = "") const {
    const std::string out_file = (dir_ / "stdout.txt").string(), err_file = (dir_ / "stderr.txt").string();
    std::string command = "cd " + shell_quote(dir_.string()) + " && " + env + (env.empty() ? "" : " ") +
                          shell_quote(cli_binary().string()) + " " + args + " >" + shell_quote(out_file) + " 2>" +
                          shell_quote(err_file);
    command += stdin_file.empty() ? " </dev/null" : " <" + shell_quote(stdin_file);
    const int status = std::system(command.c_str());
    CliResult r;
    if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.out = read_file(out_file);
    r.err = read_file(err_file);
    return r;
  }

  std::filesystem::path dir_;
};

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace tessera::test
