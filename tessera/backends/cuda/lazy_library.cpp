#include "tessera/backends/cuda/lazy_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace tessera::backends::cuda {

LazyLibrary::LazyLibrary(std::string name, const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& path : candidates) {
    // RTLD_LOCAL: the library's symbols stay out of the global scope, where they could shadow others.
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) return;
    const char* why = ::dlerror();
    tried += fmt::format("{}{}", tried.empty() ? "" : "; ", why != nullptr ? why : path + ": unknown dlopen error");
  }
  error_ = fmt::format("{} could not be loaded ({})", name, candidates.empty() ? "no file to try" : tried);
}

void* LazyLibrary::symbol(const char* symbol) const {
  return handle_ != nullptr ? ::dlsym(handle_, symbol) : nullptr;
}

}  // namespace tessera::backends::cuda
