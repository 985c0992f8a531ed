#pragma once
// File helpers shared by the checkpoint and data readers/writers, the plots and the backends' error
// reports (in core, below every layer that writes files; tessera/io/atomic_file.h names them io:: too).
//
// AtomicFile — atomic replacement: data goes to a temporary file in the same directory, created
// exclusively under an unpredictable name (tessera/core/temp_file.h: a planted symlink cannot redirect
// it, and leftovers of killed runs are cleaned up), is fsync'd, then renamed over `path` (mode 0644 less
// the umask). Readers see either the old file or the complete new one, never a partial write, even if
// the process dies midway. Every failure removes the temporary file and throws tessera::Error naming
// the path and the system's reason (errno text).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tessera {

class AtomicFile {
 public:
  // Creates the temporary file next to `path`.
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // without commit(): closes and removes the temporary file, leaving `path` untouched
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t nbytes);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  // Flushes to disk and renames the temporary file over `path`. Call exactly once.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  size_t bytes_written() const { return written_; }

 private:
  [[noreturn]] void fail_and_discard(const char* action, int err);
  void discard() noexcept;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  size_t written_ = 0;
  bool committed_ = false;
};

// Writes `bytes` to `path` atomically.
void write_file_atomic(const std::string& path, std::string_view bytes);
// Lets `produce` stream the contents through `file.write`; if it throws, `path` is left untouched.
void write_file_atomic(const std::string& path, const std::function<void(AtomicFile& file)>& produce);

// MappedFile — a read-only memory map of a whole regular file, so readers parse files and in-memory
// images with the same code and copy tensor bytes straight from the page cache. Errors name the path
// and the errno text; devices, FIFOs and directories are refused (core/regular_file.h). An empty file
// maps to (nullptr, 0).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tessera
