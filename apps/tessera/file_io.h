#pragma once
// File access for the CLI with errors that name the file and the reason (tessera::Error).
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::cli {

// The most a text input (the IR text form) may hold; larger inputs are refused before they exhaust
// memory (standard input may be endless: `tessera inspect - </dev/zero`).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{1} << 30;

// The whole file as text; "-" reads standard input. Only regular files are read (a device, FIFO or
// directory is refused), and at most kMaxTextFileBytes.
std::string read_text_file(const std::string& path);

// Whether `path` is a regular file that begins with `magic` (false for "-" and anything unreadable).
bool starts_with_bytes(const std::string& path, std::string_view magic);

// Writes `contents` to `path` atomically (io::write_file_atomic: an exclusive temporary file in the
// same folder, then a rename), so a reader never sees a half-written file and a failed write leaves any
// previous file intact. "-" writes to standard output.
void write_file_atomic(const std::string& path, std::string_view contents);

// Throws naming the folder unless a new file can be made in it (probed with a temporary file that is
// removed again), so that a command refuses an unwritable output before it starts its work. With
// `create`, a missing folder and its parents are made first.
void check_writable_folder(const std::string& folder, bool create);

}  // namespace tessera::cli
