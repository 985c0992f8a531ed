#include "tessera/core/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/core/regular_file.h"
#include "tessera/core/temp_file.h"

namespace tessera {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string parent_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// After a rename the directory entry itself must reach the disk for the new file to survive a power
// loss. Best effort: some file systems refuse to fsync directories, which is not worth failing for.
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  TESSERA_CHECK(!path_.empty(), "cannot write a file with an empty path");
  TempFile temp = create_temp_file(path_, 0644);
  fd_ = temp.fd;
  temp_path_ = std::move(temp.path);
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!committed_) ::unlink(temp_path_.c_str());
}

void AtomicFile::fail_and_discard(const char* action, int err) {
  discard();
  committed_ = true;  // nothing left to clean up in the destructor
  fail("cannot write '{}': {} failed: {}", path_, action, errno_text(err));
}

void AtomicFile::write(const void* data, size_t nbytes) {
  TESSERA_CHECK(fd_ >= 0 && !committed_, "cannot write '{}': the file was already committed or discarded", path_);
  const char* p = static_cast<const char*>(data);
  while (nbytes > 0) {
    const ssize_t n = ::write(fd_, p, nbytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_and_discard("write", errno);
    }
    p += n;
    nbytes -= static_cast<size_t>(n);
    written_ += static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  TESSERA_CHECK(fd_ >= 0 && !committed_, "cannot commit '{}': the file was already committed or discarded", path_);
  if (::fsync(fd_) != 0) fail_and_discard("fsync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail_and_discard("close", errno);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) fail_and_discard("rename", errno);
  committed_ = true;
  sync_directory(parent_directory(path_));
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

void write_file_atomic(const std::string& path, const std::function<void(AtomicFile& file)>& produce) {
  AtomicFile file(path);
  produce(file);
  file.commit();
}

MappedFile::MappedFile(const std::string& path) {
  uint64_t size = 0;
  const int fd = open_regular_file(path, &size);
  size_ = static_cast<size_t>(size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("cannot read '{}': mmap of {} bytes failed: {}", path, size_, errno_text(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace tessera
