#include "file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <sstream>

#include "tessera/core/error.h"

namespace tessera::cli {

namespace {
std::string errno_text(int err) {
  return std::generic_category().message(err);
}

// Gives up on a partly written temporary file: closes and removes it, then reports `err`.
[[noreturn]] void abandon_write(int fd, const std::filesystem::path& tmp, const std::string& path, int err) {
  if (fd >= 0) ::close(fd);
  ::unlink(tmp.c_str());
  fail("cannot write '{}': {}", path, errno_text(err));
}
}  // namespace

std::string read_text_file(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("cannot read '{}': it is a directory", path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open '{}': {}", path, errno_text(errno));
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail("cannot read '{}': {}", path, errno_text(err));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  if (path == "-") {
    std::cout << contents << std::flush;
    return;
  }
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) fail("cannot write '{}': it is a directory", path);
  // The temporary sits next to the target so that rename stays within one file system (atomic).
  const fs::path tmp = target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(), ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot write '{}': {}", path, errno_text(errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon_write(fd, tmp, path, errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) abandon_write(fd, tmp, path, errno);
  if (::close(fd) != 0) abandon_write(-1, tmp, path, errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) abandon_write(-1, tmp, path, errno);
}

}  // namespace tessera::cli
