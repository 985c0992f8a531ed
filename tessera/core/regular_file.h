#pragma once
// Opening a file that a reader will read whole. Only regular files qualify: a device (/dev/zero), a
// FIFO or a directory has no size to check against and could be read forever (or block at open), so
// each is refused with an error that says what it is.
#include <cstdint>
#include <string>

namespace tessera {

// A read-only descriptor (O_CLOEXEC) of the regular file at `path` and its size in bytes. Never blocks
// on a FIFO. Throws tessera::Error naming the path and the reason (errno text, or the kind of file).
int open_regular_file(const std::string& path, uint64_t* size);

// "a directory", "a character device", "a FIFO", ... for a stat mode.
const char* file_kind(unsigned mode);

}  // namespace tessera
