#include "tessera/backends/cuda/nvrtc_compiler.h"

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "tessera/backends/common/compile_profile.h"
#include "tessera/backends/common/kernel_cache.h"
#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/launch.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace disk = tessera::backends::common;  // the shared kernel-cache helpers

namespace {

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::string cache_folder() { return disk::kernel_cache_dir() + "/cuda"; }

// $TESSERA_CUDA_INCLUDE, else the toolkit this build found (the same path on every machine here).
std::string cuda_include_dir() {
  if (const char* env = std::getenv("TESSERA_CUDA_INCLUDE"); env != nullptr && *env != '\0') return env;
  return TESSERA_CUDA_INCLUDE_DIR;
}

}  // namespace

KernelModule::~KernelModule() { cudaLibraryUnload(library_); }

cudaKernel_t KernelModule::kernel(const std::string& name) const {
  cudaKernel_t k = nullptr;
  check(cudaLibraryGetKernel(&k, library_, name.c_str()), ("cudaLibraryGetKernel(" + name + ")").c_str());
  return k;
}

CompileStats NvrtcCompiler::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string NvrtcCompiler::compile_to_cubin(const std::string& source, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog = nullptr;
  check(nvrtcCreateProgram(&prog, source.c_str(), (what + ".cu").c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  const std::string arch = fmt::format("--gpu-architecture=sm_{}", arch_);
  // No --use_fast_math: results are compared with the reference backend, so math calls stay exact.
  // cuda_fp16.h and cuda_bf16.h are not NVRTC built-ins: they come from the toolkit's include folder.
  const std::string include = "-I" + cuda_include_dir();
  std::vector<const char*> options = {arch.c_str(), "--std=c++17", "-default-device", include.c_str()};
  const nvrtcResult status = nvrtcCompileProgram(prog, static_cast<int>(options.size()), options.data());
  if (status != NVRTC_SUCCESS) {
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    nvrtcDestroyProgram(&prog);
    std::string saved = "(could not be saved)";
    try {
      disk::make_directories(cache_folder());
      saved = cache_folder() + "/failed-" + disk::content_hash(source) + ".cu";
      disk::write_file_atomically(saved, source);
    } catch (const std::exception&) {
    }
    throw Error(fmt::format("cuda: NVRTC could not compile {} ({}); the source is at {}\n{}", what,
                            nvrtcGetErrorString(status), saved, log));
  }
  size_t size = 0;
  check(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  std::string cubin(size, '\0');
  check(nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
  nvrtcDestroyProgram(&prog);
  stats_.compiled += 1;
  stats_.nvrtc_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return cubin;
}

namespace {

size_t count_of(const std::string& text, const char* word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

}  // namespace

std::shared_ptr<KernelModule> NvrtcCompiler::module(const std::string& kernels, const std::string& what) {
  // Every kernel is launched with programmatic dependent launch (launch.h), which is only safe when it
  // waits for the grids before it first.
  const size_t entries = count_of(kernels, "__global__"), prologues = count_of(kernels, "TSR_GRID_PROLOGUE();");
  TESSERA_CHECK(entries == prologues, "cuda: {} has {} kernels but {} TSR_GRID_PROLOGUE() calls", what, entries,
                prologues);
  const std::string source = kGridPrologueSource + kernels;
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key = disk::content_hash(fmt::format("sm_{}\nnvrtc {}\n{}", arch_, nvrtc_version(), source));
  if (auto it = loaded_.find(key); it != loaded_.end()) {
    if (std::shared_ptr<KernelModule> m = it->second.lock()) {
      stats_.memory_hits += 1;
      return m;
    }
  }
  const std::string path = cache_folder() + "/" + key + ".cubin";
  std::string cubin;
  {
    const common::CompilePhase phase("cubin read");
    cubin = disk::read_file(path);
  }
  if (cubin.empty()) {
    const common::CompilePhase phase("nvrtc");
    cubin = compile_to_cubin(source, what);
    try {
      disk::make_directories(cache_folder());
      disk::write_file_atomically(path, cubin);
    } catch (const std::exception&) {
      // A read-only cache folder costs a recompile next time, nothing else.
    }
  } else {
    stats_.disk_hits += 1;
  }
  const common::CompilePhase phase("cubin load");
  cudaLibrary_t library = nullptr;
  check(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        ("cudaLibraryLoadData (" + what + ")").c_str());
  auto m = std::make_shared<KernelModule>(library);
  loaded_[key] = m;
  return m;
}

}  // namespace tessera::backends::cuda
