#pragma once
// Temporary files and folders next to a file about to be written, created so that nobody else can
// choose them: an unpredictable name (".<target>.tessera-tmp-<host>-<pid>-<64 random bits>") opened
// with O_CREAT | O_EXCL | O_NOFOLLOW, so a symlink planted in the folder can never redirect the write.
//
// Leftovers of a killed process are removed by the next process that makes a temporary file in the
// same folder (once per folder and process): a file or folder of ours (the marker in its name, owned by
// this user) is stale when its mtime is more than an hour old, or when it was made on this host
// (the host tag matches) by a process that no longer exists. A live writer keeps its mtime fresh, and
// a writer on another host sharing the folder is only judged by age.
#include <string>

namespace tessera {

struct TempFile {
  int fd = -1;       // open for writing, O_CLOEXEC
  std::string path;  // in the same folder as the target
};

// A new, empty file next to `target` with permissions `mode` (less the umask).
TempFile create_temp_file(const std::string& target, unsigned mode);
// A new folder next to `target` with permissions 0700, for tools that write their own output files.
std::string create_temp_directory(const std::string& target);
// Removes a folder made by create_temp_directory and the plain files in it (best effort).
void remove_temp_directory(const std::string& path);

// Removes stale temporary files and folders of ours from `dir` (see above); returns how many.
int remove_stale_temp_files(const std::string& dir);

// The marker every temporary name carries.
inline constexpr const char* kTempMarker = ".tessera-tmp-";

}  // namespace tessera
