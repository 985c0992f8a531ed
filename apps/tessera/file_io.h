#pragma once
// File access for the CLI with errors that name the file and the reason (tessera::Error).
#include <string>
#include <string_view>

namespace tessera::cli {

// The whole file as text; "-" reads standard input.
std::string read_text_file(const std::string& path);

// Writes `contents` to `path` through a temporary file in the same folder and a rename, so a reader
// never sees a half-written file and a failed write leaves any previous file intact. "-" writes to
// standard output.
void write_file_atomic(const std::string& path, std::string_view contents);

}  // namespace tessera::cli
