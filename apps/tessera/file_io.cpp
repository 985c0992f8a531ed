#include "file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "tessera/core/error.h"
#include "tessera/core/regular_file.h"
#include "tessera/io/atomic_file.h"

namespace tessera::cli {

namespace {

// Reads `fd` to its end, refusing more than kMaxTextFileBytes; `what` names it in messages.
std::string read_all(int fd, const std::string& what) {
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot read {}: {}", what, std::strerror(errno));
    }
    if (text.size() + static_cast<size_t>(n) > kMaxTextFileBytes) {
      fail("cannot read {}: it holds more than the {} bytes a text input may have", what, kMaxTextFileBytes);
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  if (path == "-") return read_all(STDIN_FILENO, "standard input");
  uint64_t size = 0;
  const int fd = open_regular_file(path, &size);
  try {
    if (size > kMaxTextFileBytes) {
      fail("cannot read '{}': {} bytes is more than the {} bytes a text input may have", path, size,
           kMaxTextFileBytes);
    }
    std::string text = read_all(fd, "'" + path + "'");
    ::close(fd);
    return text;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

bool starts_with_bytes(const std::string& path, std::string_view magic) {
  if (path == "-") return false;
  uint64_t size = 0;
  int fd = -1;
  try {
    fd = open_regular_file(path, &size);
  } catch (const Error&) {
    return false;  // the reader that opens it next says why
  }
  std::string head(magic.size(), '\0');
  const bool match = ::pread(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) && head == magic;
  ::close(fd);
  return match;
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  if (path == "-") {
    std::cout << contents << std::flush;
    return;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("cannot write '{}': it is a directory", path);
  io::write_file_atomic(path, contents);
}

void check_writable_folder(const std::string& folder, bool create) {
  const std::string dir = folder.empty() ? "." : folder;
  std::error_code ec;
  if (create) std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create the folder '{}': {}", dir, ec.message());
  if (!std::filesystem::is_directory(dir, ec)) fail("cannot write into '{}': it is not an existing folder", dir);
  std::string probe = dir + "/.tessera-write-test-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) fail("cannot write into the folder '{}': {}", dir, std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace tessera::cli
