// The NVRTC functions the CUDA backend calls, defined here with nvrtc.h's prototypes and forwarded to
// libnvrtc, which is opened on the first call (lazy_library.h says why), so no call site changes.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nvrtc.h>

#include "tessera/backends/cuda/lazy_library.h"

namespace tessera::backends::cuda {

const LazyLibrary& nvrtc_library() {
  // nvrtc.h has no version macro; NVRTC's soname carries the toolkit's major version (libnvrtc.so.13
  // in CUDA 13), found on the search path, else in the toolkit. Leaked on purpose: forwarding calls may
  // come from static destructors that run after it would be gone.
  // A named vector of candidates, as in lazy_cublaslt.cpp (clang 14 ASan's false use-after-scope).
  static const LazyLibrary* library = [] {
    constexpr int kMajor = CUDART_VERSION / 1000;
    const std::vector<std::string> candidates{
        fmt::format("libnvrtc.so.{}", kMajor), fmt::format("{}/libnvrtc.so.{}", TESSERA_CUDA_LIBRARY_DIR, kMajor)};
    return new LazyLibrary("NVRTC", candidates);
  }();
  return *library;
}

}  // namespace tessera::backends::cuda

namespace {

using tessera::backends::cuda::forward;
using tessera::backends::cuda::nvrtc_library;

// What every function gives when the library could not be loaded (NVRTC has no "not initialized").
constexpr nvrtcResult kNotLoaded = NVRTC_ERROR_INTERNAL_ERROR;

}  // namespace

// The macro keeps each function's name and the symbol it forwards to the same word.
#define TESSERA_FORWARD(fn, ...) forward<&fn, nvrtc_library>(#fn, kNotLoaded, __VA_ARGS__)

extern "C" {

nvrtcResult nvrtcVersion(int* major, int* minor) {
  return TESSERA_FORWARD(nvrtcVersion, major, minor);
}

// Without the library, the error text is why it could not be loaded: check() puts it in its error.
const char* nvrtcGetErrorString(nvrtcResult result) {
  if (!nvrtc_library().loaded()) return nvrtc_library().error().c_str();
  return forward<&nvrtcGetErrorString, nvrtc_library>("nvrtcGetErrorString", "NVRTC_ERROR unknown", result);
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int numHeaders,
                               const char* const* headers, const char* const* includeNames) {
  return TESSERA_FORWARD(nvrtcCreateProgram, prog, src, name, numHeaders, headers, includeNames);
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  return TESSERA_FORWARD(nvrtcDestroyProgram, prog);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options) {
  return TESSERA_FORWARD(nvrtcCompileProgram, prog, numOptions, options);
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* cubinSizeRet) {
  return TESSERA_FORWARD(nvrtcGetCUBINSize, prog, cubinSizeRet);
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin) {
  return TESSERA_FORWARD(nvrtcGetCUBIN, prog, cubin);
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* logSizeRet) {
  return TESSERA_FORWARD(nvrtcGetProgramLogSize, prog, logSizeRet);
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log) {
  return TESSERA_FORWARD(nvrtcGetProgramLog, prog, log);
}

}  // extern "C"

#undef TESSERA_FORWARD
