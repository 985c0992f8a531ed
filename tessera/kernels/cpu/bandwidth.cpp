// Streaming kernels: split into one contiguous range per thread. Arrays much larger than the L3 are
// written with non-temporal stores (no read-for-ownership of the destination), as STREAM does when
// built with a good compiler; smaller ones with ordinary stores so the result stays in cache.
#include "tessera/kernels/cpu/bandwidth.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels {

namespace {

// relu with the IR op's NaN rule: only values below zero become zero.
inline float relu(float v) { return v < 0.0f ? 0.0f : v; }

constexpr int64_t kStreamingThreshold = int64_t{4} << 20;  // elements (16 MiB per array)

template <typename Body>
void split(int64_t n, runtime::ThreadPool* pool, Body&& body) {
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  tp.parallel_for(n, 32768, [&](int64_t i0, int64_t i1) { body(i0, i1); });
}

#if TESSERA_X86_KERNELS
// The three kernels share one AVX2 loop shape: f computes 8 results from index i.
template <typename F>
__attribute__((target("avx2,fma"), always_inline)) inline void stream_loop(float* out, int64_t i0, int64_t i1,
                                                                           bool streaming, F&& f) {
  int64_t i = i0;
  // Scalar head up to 32-byte alignment of the destination, so the stores can be non-temporal.
  while (i < i1 && (reinterpret_cast<uintptr_t>(out + i) & 31) != 0) {
    out[i] = f.scalar(i);
    ++i;
  }
  if (streaming) {
    for (; i + 8 <= i1; i += 8) _mm256_stream_ps(out + i, f.vector(i));
  } else {
    for (; i + 8 <= i1; i += 8) _mm256_store_ps(out + i, f.vector(i));
  }
  for (; i < i1; ++i) out[i] = f.scalar(i);
}
#endif

struct Triad {
  const float *b, *c;
  float s;
  float scalar(int64_t i) const { return b[i] + s * c[i]; }
#if TESSERA_X86_KERNELS
  __attribute__((target("avx2,fma"))) __m256 vector(int64_t i) const {
    return _mm256_fmadd_ps(_mm256_set1_ps(s), _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i));
  }
#endif
};

struct ReluAxpb {
  const float *a, *x, *b;
  float scalar(int64_t i) const { return relu(a[i] * x[i] + b[i]); }
#if TESSERA_X86_KERNELS
  __attribute__((target("avx2,fma"))) __m256 vector(int64_t i) const {
    const __m256 v = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(x + i), _mm256_loadu_ps(b + i));
    return _mm256_max_ps(_mm256_setzero_ps(), v);
  }
#endif
};

struct ReluAxpbScalar {
  float a;
  const float* x;
  float b;
  float scalar(int64_t i) const { return relu(a * x[i] + b); }
#if TESSERA_X86_KERNELS
  __attribute__((target("avx2,fma"))) __m256 vector(int64_t i) const {
    const __m256 v = _mm256_fmadd_ps(_mm256_set1_ps(a), _mm256_loadu_ps(x + i), _mm256_set1_ps(b));
    return _mm256_max_ps(_mm256_setzero_ps(), v);
  }
#endif
};

#if TESSERA_X86_KERNELS
template <typename F>
__attribute__((target("avx2,fma"))) void run_avx2(float* out, int64_t i0, int64_t i1, bool streaming, const F& f) {
  stream_loop(out, i0, i1, streaming, f);
  if (streaming) _mm_sfence();
}
#endif

template <typename F>
void run(int64_t n, float* out, runtime::ThreadPool* pool, const F& f) {
  [[maybe_unused]] const bool avx2 = use_avx2();
  [[maybe_unused]] const bool streaming = n >= kStreamingThreshold;
  split(n, pool, [&](int64_t i0, int64_t i1) {
#if TESSERA_X86_KERNELS
    if (avx2) {
      run_avx2(out, i0, i1, streaming, f);
    } else
#endif
    {
      for (int64_t i = i0; i < i1; ++i) out[i] = f.scalar(i);
    }
  });
}

#if TESSERA_X86_KERNELS
// Four independent accumulators keep four loads in flight per iteration; integer adds have no
// slow path for any bit pattern (float adds would meet denormals in arbitrary bytes).
__attribute__((target("avx2"))) uint64_t read_sum_avx2(const uint64_t* x, int64_t i0, int64_t i1) {
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
  int64_t i = i0;
  for (; i + 16 <= i1; i += 16) {
    for (int a = 0; a < 4; ++a) {
      acc[a] = _mm256_add_epi64(acc[a], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 4 * a)));
    }
  }
  const __m256i v = _mm256_add_epi64(_mm256_add_epi64(acc[0], acc[1]), _mm256_add_epi64(acc[2], acc[3]));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < i1; ++i) sum += x[i];
  return sum;
}
#endif

}  // namespace

uint64_t stream_read_sum(int64_t n, const uint64_t* x, runtime::ThreadPool* pool) {
  [[maybe_unused]] const bool avx2 = use_avx2();
  std::atomic<uint64_t> total{0};
  split(n, pool, [&](int64_t i0, int64_t i1) {
    uint64_t sum = 0;
#if TESSERA_X86_KERNELS
    if (avx2) {
      sum = read_sum_avx2(x, i0, i1);
    } else
#endif
    {
      for (int64_t i = i0; i < i1; ++i) sum += x[i];
    }
    total.fetch_add(sum, std::memory_order_relaxed);
  });
  return total.load();
}

void stream_triad(int64_t n, float* a, const float* b, const float* c, float s, runtime::ThreadPool* pool) {
  run(n, a, pool, Triad{b, c, s});
}

void fused_relu_axpb(int64_t n, const float* a, const float* x, const float* b, float* y, runtime::ThreadPool* pool) {
  run(n, y, pool, ReluAxpb{a, x, b});
}

void fused_relu_axpb_scalar(int64_t n, float a, const float* x, float b, float* y, runtime::ThreadPool* pool) {
  run(n, y, pool, ReluAxpbScalar{a, x, b});
}

}  // namespace tessera::kernels
