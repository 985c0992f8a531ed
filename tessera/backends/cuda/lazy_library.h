#pragma once
// A shared library opened with dlopen on first use instead of linked at load time. cuBLASLt and NVRTC
// are loaded this way: linked, they cost every Tessera binary about 80 ms and 240 MB of peak memory at
// start-up, though only the CUDA backend calls them (lazy_cublaslt.cpp, lazy_nvrtc.cpp).
#include <string>
#include <vector>

namespace tessera::backends::cuda {

class LazyLibrary {
 public:
  // Opens the first of `candidates` that loads (a bare soname goes through the loader's search path);
  // `name` is how error() refers to the library.
  LazyLibrary(std::string name, const std::vector<std::string>& candidates);
  // Never closed: objects made through the library may be released by static destructors at exit.
  ~LazyLibrary() = default;
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  // Empty when loaded; otherwise one line naming the library and dlerror()'s words for each candidate.
  const std::string& error() const { return error_; }
  // The address of `symbol`, or nullptr when the library is not loaded or lacks it.
  void* symbol(const char* symbol) const;

 private:
  void* handle_ = nullptr;
  std::string error_;
};

// The CUDA backend's two libraries, each opened on its first use.
const LazyLibrary& cublaslt_library();
const LazyLibrary& nvrtc_library();

// The body of a forwarding definition: calls the library's own function `name`, whose type is that of
// Self (the forwarding definition), looked up once; returns `unloaded` when the library or it is absent.
template <auto* Self, const LazyLibrary& (*Library)(), class R, class... Args>
R forward(const char* name, R unloaded, Args... args) {
  static const auto real = reinterpret_cast<decltype(Self)>(Library().symbol(name));
  return real != nullptr ? real(args...) : unloaded;
}

}  // namespace tessera::backends::cuda
