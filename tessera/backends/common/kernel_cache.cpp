// The disk cache of compiled kernels: folder choice, content keys, atomic stores.
#include "tessera/backends/common/kernel_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tessera/core/error.h"
#include "tessera/core/temp_file.h"

namespace tessera::backends::common {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}
}  // namespace

std::string kernel_cache_dir() {
  if (std::string d = env("TESSERA_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/tessera/kernels";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/tessera/kernels";
  return "/tmp/tessera-kernels";
}

void make_directories(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      const int err = errno;
      fail("kernel cache: cannot create directory '{}': {}", prefix, std::strerror(err));
    }
  }
  struct stat st {};
  TESSERA_CHECK(::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode), "kernel cache: '{}' is not a directory", path);
}

std::string content_hash(std::string_view bytes) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char c : bytes) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
    b ^= b >> 29;
  }
  return fmt::format("{:016x}{:016x}", a, b);
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  const TempFile tmp = create_temp_file(path, 0644);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(tmp.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(tmp.fd);
      ::unlink(tmp.path.c_str());
      fail("kernel cache: cannot write '{}': {}", tmp.path, std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::close(tmp.fd);
  if (::rename(tmp.path.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.path.c_str());
    fail("kernel cache: cannot rename '{}' to '{}': {}", tmp.path, path, std::strerror(err));
  }
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CacheEntry cache_entry(std::string_view format, std::string_view source, std::string_view toolchain) {
  CacheEntry e;
  std::string keyed;
  keyed.reserve(format.size() + source.size() + toolchain.size() + 8);
  keyed.append(format).append("\n--\n").append(source).append("\n--\n").append(toolchain);
  e.key = content_hash(keyed);
  e.dir = kernel_cache_dir();
  e.base = e.dir + "/" + e.key;
  return e;
}

std::string find_cached(const CacheEntry& entry, std::string_view extension) {
  std::string path = entry.path(extension);
  return file_exists(path) ? path : std::string();
}

std::string store_cached(const CacheEntry& entry, std::string_view extension, std::string_view bytes) {
  make_directories(entry.dir);
  std::string path = entry.path(extension);
  write_file_atomically(path, bytes);
  return path;
}

std::string store_built(const CacheEntry& entry, std::string_view extension,
                        const std::function<void(const std::string& path)>& build) {
  make_directories(entry.dir);
  std::string path = entry.path(extension);
  const std::string work = create_temp_directory(path);
  const std::string tmp = work + "/kernels" + std::string(extension);
  try {
    build(tmp);
  } catch (...) {
    remove_temp_directory(work);
    throw;
  }
  const bool moved = std::rename(tmp.c_str(), path.c_str()) == 0;
  remove_temp_directory(work);
  if (!moved) fail("kernel cache: cannot move the compiled kernels into the cache at '{}'", path);
  return path;
}

}  // namespace tessera::backends::common
