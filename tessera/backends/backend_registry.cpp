// The table of backends known by name, and the default one used by eager evaluation and compile(). A
// layer of its own (cmake/layers.cmake): it lists every backend, the optional CUDA and Vulkan ones included, so it
// sits above all of them; what the backends share (backend.cpp) lies below them.
#include <atomic>
#include <cstdlib>
#include <utility>

#include "tessera/backends/backend.h"
#include "tessera/backends/cpu/cpu_backend.h"
#ifdef TESSERA_HAVE_CUDA
#include "tessera/backends/cuda/cuda_backend.h"
#endif
#ifdef TESSERA_HAVE_VULKAN
#include "tessera/backends/vulkan/vulkan_backend.h"
#endif
#include "tessera/core/error.h"

namespace tessera::backends {
namespace {

#if !defined(TESSERA_HAVE_CUDA) || !defined(TESSERA_HAVE_VULKAN)
// A backend this build lacks: listed, so that `tessera devices` and errors say how to get it.
class NotCompiledIn final : public Backend {
 public:
  NotCompiledIn(std::string name, std::string why) : name_(std::move(name)), why_(std::move(why)) {}
  std::string name() const override { return name_; }
  bool available() const override { return false; }
  std::string status() const override { return "not compiled in: " + why_; }
  std::vector<Device*> devices() override { return {}; }
  Device& device() override { throw Error(fmt::format("{} backend: {}", name_, status())); }
  bool supports(const ir::Node&) const override { return false; }
  using Backend::compile;
  std::unique_ptr<Executable> compile(const ir::Graph&, const CompileSpec&) override {
    throw Error(fmt::format("{} backend: {}", name_, status()));
  }

 private:
  std::string name_, why_;
};

#endif

#ifndef TESSERA_HAVE_CUDA
Backend& cuda_not_compiled() {
  static NotCompiledIn b("cuda", "this build found no CUDA toolkit (configure with CUDAToolkit_ROOT=...)");
  return b;
}
#endif

#ifndef TESSERA_HAVE_VULKAN
Backend& vulkan_not_compiled() {
  static NotCompiledIn b("vulkan", "this build found no Vulkan headers or shaderc_combined (install libvulkan-dev "
                                   "and libshaderc-dev, or configure with TESSERA_VULKAN=ON to require them)");
  return b;
}
#endif

// Listed explicitly (not through static registrars) so that linking the static library never drops
// a backend. The first entry is the oracle.
const std::vector<std::pair<std::string, Backend& (*)()>>& known_backends() {
  static const std::vector<std::pair<std::string, Backend& (*)()>> table{
      {"reference", &reference_backend},
      {"cpu", &cpu_backend},
#ifdef TESSERA_HAVE_CUDA
      {"cuda", &cuda::cuda_backend},
#else
      {"cuda", &cuda_not_compiled},
#endif
#ifdef TESSERA_HAVE_VULKAN
      {"vulkan", &vulkan::vulkan_backend},
#else
      {"vulkan", &vulkan_not_compiled},
#endif
  };
  return table;
}

Backend* initial_default() {
  if (const char* env = std::getenv("TESSERA_BACKEND"); env != nullptr && *env != '\0') {
    return &backend_by_name(env);
  }
  // The fast CPU backend is the default for eager and compiled code, as for the CLI; the reference
  // backend is the oracle, chosen by name ($TESSERA_BACKEND=reference) and in tests.
  return &cpu_backend();
}

std::atomic<Backend*>& default_slot() {
  static std::atomic<Backend*> slot{initial_default()};
  return slot;
}

}  // namespace

Backend* find_backend(const std::string& name) {
  for (const auto& [known, get] : known_backends()) {
    if (known == name) return &get();
  }
  return nullptr;
}

Backend& backend_by_name(const std::string& name) {
  if (Backend* b = find_backend(name)) {
    TESSERA_CHECK(b->available(), "backend '{}' cannot run here: {}", name, b->status());
    return *b;
  }
  std::string names;
  for (const auto& [known, get] : known_backends()) names += (names.empty() ? "" : ", ") + known;
  fail("unknown backend '{}' (known: {})", name, names);
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& entry : known_backends()) names.push_back(entry.first);
  return names;
}

Backend& default_backend() { return *default_slot().load(); }

void set_default_backend(Backend& backend) { default_slot().store(&backend); }

}  // namespace tessera::backends
