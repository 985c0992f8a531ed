#pragma once
// The JIT's disk cache: where it lives, content keys, and atomic writes that concurrent processes can
// share (write an exclusively created temporary file, tessera/core/temp_file.h, then rename it into
// place; leftovers of killed processes are removed by the next one).
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::backends::cpu {

// $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera/kernels, else $HOME/.cache/tessera/kernels, else
// /tmp/tessera-kernels. Read on every call, so tests may point it elsewhere; created on demand.
std::string kernel_cache_dir();
void make_directories(const std::string& path);  // mkdir -p; throws naming the path

// 128-bit content hash as 32 hex digits (two independent 64-bit FNV-1a streams).
std::string content_hash(std::string_view bytes);

// Writes `bytes` to `path` via a temporary file and rename(2); throws naming the path.
void write_file_atomically(const std::string& path, std::string_view bytes);
bool file_exists(const std::string& path);
std::string read_file(const std::string& path);  // "" when unreadable

}  // namespace tessera::backends::cpu
