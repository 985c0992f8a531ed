#include "tessera/core/temp_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <set>
#include <vector>

#include "tessera/core/error.h"

namespace tessera {

namespace {

constexpr time_t kStaleOtherHostSeconds = 60 * 60;       // a live writer touches its file more often
constexpr time_t kStaleSameHostSeconds = 24 * 60 * 60;   // in case the dead writer's pid was reused
constexpr size_t kMaxBaseBytes = 128;                    // keeps temporary names under NAME_MAX
constexpr int kCreateAttempts = 16;

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string file_name_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A short tag of this host's name, so that pids are only judged on the host that issued them.
uint32_t host_tag() {
  static const uint32_t tag = [] {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return uint32_t{0};
    uint32_t h = 2166136261u;
    for (const char* p = name; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
    return h;
  }();
  return tag;
}

uint64_t random64() {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof v, 0) == static_cast<ssize_t>(sizeof v)) return v;
  std::random_device rd;  // getrandom is missing or interrupted: the library's entropy source instead
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

std::string temp_path(const std::string& dir, const std::string& target) {
  const std::string base = file_name_of(target).substr(0, kMaxBaseBytes);
  return fmt::format("{}/.{}{}{:08x}-{}-{:016x}", dir, base, kTempMarker, host_tag(), ::getpid(), random64());
}

// Whether the entry `name` (stat `st`) is a leftover of a process that can no longer finish it.
bool is_stale(const std::string& name, const struct stat& st, time_t now) {
  if (st.st_uid != ::geteuid() || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) return false;
  const size_t at = name.rfind(kTempMarker);
  if (at == std::string::npos) return false;
  unsigned host = 0;
  long pid = 0;
  unsigned long long salt = 0;
  char extra = 0;
  if (std::sscanf(name.c_str() + at + std::strlen(kTempMarker), "%8x-%ld-%16llx%c", &host, &pid, &salt, &extra) != 3) {
    return false;
  }
  const time_t age = now - st.st_mtime;
  if (host != host_tag() || pid <= 0) return age > kStaleOtherHostSeconds;
  if (pid == ::getpid()) return false;
  if (age > kStaleSameHostSeconds) return true;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Unlinks the plain entries of the folder `name` in `dir_fd`, then the folder (never following links).
bool remove_folder_at(int dir_fd, const char* name) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  if (DIR* d = ::fdopendir(fd)) {
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ::unlinkat(fd, e->d_name, 0);
    }
    ::closedir(d);  // closes fd
  } else {
    ::close(fd);
  }
  return ::unlinkat(dir_fd, name, AT_REMOVEDIR) == 0;
}

void remove_stale_once(const std::string& dir) {
  static std::mutex mutex;
  static std::set<std::string> done;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!done.insert(dir).second) return;
  }
  remove_stale_temp_files(dir);
}

}  // namespace

int remove_stale_temp_files(const std::string& dir) {
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return 0;
  DIR* d = ::fdopendir(dir_fd);
  if (d == nullptr) {
    ::close(dir_fd);
    return 0;
  }
  std::vector<std::pair<std::string, bool>> stale;  // name, is a folder
  const time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    if (std::strstr(e->d_name, kTempMarker) == nullptr) continue;
    struct stat st {};
    if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (is_stale(e->d_name, st, now)) stale.emplace_back(e->d_name, S_ISDIR(st.st_mode));
  }
  int removed = 0;
  for (const auto& [name, is_folder] : stale) {
    removed += is_folder ? remove_folder_at(dir_fd, name.c_str()) : ::unlinkat(dir_fd, name.c_str(), 0) == 0;
  }
  ::closedir(d);  // closes dir_fd
  return removed;
}

TempFile create_temp_file(const std::string& target, unsigned mode) {
  const std::string dir = directory_of(target);
  remove_stale_once(dir);
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    TempFile t;
    t.path = temp_path(dir, target);
    // O_EXCL refuses any existing entry, a symlink included; O_NOFOLLOW says so once more.
    t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
    if (t.fd >= 0) return t;
    if (errno != EEXIST) {
      const int err = errno;
      fail("cannot write '{}': creating a temporary file in '{}' failed: {}", target, dir, std::strerror(err));
    }
  }
  fail("cannot write '{}': no unused temporary name in '{}' after {} attempts", target, dir, kCreateAttempts);
}

std::string create_temp_directory(const std::string& target) {
  const std::string dir = directory_of(target);
  remove_stale_once(dir);
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    const std::string path = temp_path(dir, target);
    if (::mkdir(path.c_str(), 0700) == 0) return path;
    if (errno != EEXIST) {
      const int err = errno;
      fail("cannot write '{}': creating a temporary folder in '{}' failed: {}", target, dir, std::strerror(err));
    }
  }
  fail("cannot write '{}': no unused temporary name in '{}' after {} attempts", target, dir, kCreateAttempts);
}

void remove_temp_directory(const std::string& path) {
  const std::string dir = directory_of(path), name = file_name_of(path);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return;
  remove_folder_at(dir_fd, name.c_str());
  ::close(dir_fd);
}

}  // namespace tessera
