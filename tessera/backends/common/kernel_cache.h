#pragma once
// The disk cache of compiled kernels, for any backend and any artifact (the CPU JIT's C shared
// objects; a GPU backend's cubins or PTX): where it lives, content keys, and atomic writes that
// concurrent processes can share (write an exclusively created temporary file, tessera/core/temp_file.h,
// then rename it into place; leftovers of killed processes are removed by the next one).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tessera::backends::common {

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

// The name under which a cached artifact carries its own key (the C JIT: a `const char[]` symbol),
// checked after loading it, so that a file swapped or replaced under its name is rebuilt instead of
// silently running other kernels.
inline constexpr const char* kModuleKeySymbol = "tsr_module_key";

// One entry of the cache: what `toolchain` builds from `source`, as files named after its key with
// the extensions the backend chooses (".c" and ".so" for the CPU JIT).
struct CacheEntry {
  std::string key;   // content hash of (format, source, toolchain)
  std::string dir;   // the cache folder when the entry was made
  std::string base;  // dir + "/" + key
  std::string path(std::string_view extension) const { return base + std::string(extension); }
};

// `format` names the kind of artifact and the version of its layout in the cache, so that artifacts of
// another backend or an older layout never match; `toolchain` names what builds it (compiler command
// and version). Touches no file.
CacheEntry cache_entry(std::string_view format, std::string_view source, std::string_view toolchain);

// The path of the entry's file with `extension`, or "" when there is none.
std::string find_cached(const CacheEntry& entry, std::string_view extension);

// Stores `bytes` as the entry's file with `extension` (atomically, creating the folder); returns its path.
std::string store_cached(const CacheEntry& entry, std::string_view extension, std::string_view bytes);

// Stores the entry's file with `extension` as written by `build(path)` (a compiler run): `path` lies in
// a new folder only this process can enter, because a compiler follows a symlink at its output path, so
// the output must not sit where others could plant one; the file is then renamed into place. Returns
// its path; what `build` throws propagates, with the folder removed.
std::string store_built(const CacheEntry& entry, std::string_view extension,
                        const std::function<void(const std::string& path)>& build);

}  // namespace tessera::backends::common
