#include "tessera/kernels/cpu/cpu_features.h"

#include "tessera/kernels/cpu/x86_kernels.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace tessera::kernels {
namespace {

bool cpu_has_avx512_vnni() {
#if TESSERA_X86_KERNELS
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw");
#else
  return false;
#endif
}

bool cpu_has_avx512f() {
#if TESSERA_X86_KERNELS
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool env_set(const char* name) {
  const char* env = std::getenv(name);
  return env != nullptr && std::strcmp(env, "") != 0 && std::strcmp(env, "0") != 0;
}

std::atomic<bool>& avx512_vnni_switch() {
  static std::atomic<bool> enabled = cpu_has_avx512_vnni() && !env_set("TESSERA_NO_AVX512");
  return enabled;
}

std::atomic<bool>& avx512_switch() {
  static std::atomic<bool> enabled = cpu_has_avx512f() && !env_set("TESSERA_NO_AVX512");
  return enabled;
}

std::atomic<bool>& avx2_switch() {
  static std::atomic<bool> enabled = [] {
    const char* env = std::getenv("TESSERA_NO_AVX2");
    const bool disabled = env != nullptr && std::strcmp(env, "") != 0 && std::strcmp(env, "0") != 0;
    return TESSERA_X86_KERNELS && cpu_has_avx2_fma() && !disabled;
  }();
  return enabled;
}

}  // namespace

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool x86_kernels_built() {
  return TESSERA_X86_KERNELS;
}

bool use_avx2() {
  return avx2_switch().load(std::memory_order_relaxed);
}

void set_avx2_enabled(bool enabled) {
  avx2_switch().store(TESSERA_X86_KERNELS && enabled && cpu_has_avx2_fma(), std::memory_order_relaxed);
}

bool use_avx512_vnni() {
  return use_avx2() && avx512_vnni_switch().load(std::memory_order_relaxed);
}

void set_avx512_vnni_enabled(bool enabled) {
  avx512_vnni_switch().store(enabled && cpu_has_avx512_vnni(), std::memory_order_relaxed);
}

bool use_avx512() {
  return use_avx2() && avx512_switch().load(std::memory_order_relaxed);
}

void set_avx512_enabled(bool enabled) {
  avx512_switch().store(enabled && cpu_has_avx512f(), std::memory_order_relaxed);
}

}  // namespace tessera::kernels
