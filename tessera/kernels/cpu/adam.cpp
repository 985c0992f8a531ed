// The fused Adam/AdamW pass. Scalars are formed in double as the reference does, then used in
// float with the reference's operation order, so results agree to float rounding.
#include "tessera/kernels/cpu/adam.h"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS
#include <immintrin.h>
#endif

namespace tessera::kernels {

namespace {

struct AdamScalars {
  float b1, one_minus_b1, b2, one_minus_b2, inv_sqrt_bc2, eps, step_size, wd, decay;
  bool decoupled, has_wd;
};

AdamScalars scalars_of(const AdamHyper& h) {
  TESSERA_CHECK(h.step >= 1, "adam_update: step must be >= 1 (the first update is step 1), got {}", h.step);
  const double t = static_cast<double>(h.step);
  const double bc1 = 1.0 - std::pow(h.beta1, t), bc2 = 1.0 - std::pow(h.beta2, t);
  AdamScalars s{};
  s.b1 = static_cast<float>(h.beta1);
  s.one_minus_b1 = static_cast<float>(1.0 - h.beta1);
  s.b2 = static_cast<float>(h.beta2);
  s.one_minus_b2 = static_cast<float>(1.0 - h.beta2);
  s.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  s.eps = static_cast<float>(h.eps);
  s.step_size = static_cast<float>(h.lr / bc1);
  s.wd = static_cast<float>(h.weight_decay);
  s.decay = static_cast<float>(1.0 - h.lr * h.weight_decay);
  s.decoupled = h.decoupled;
  s.has_wd = h.weight_decay != 0.0;
  return s;
}

// Elements [i0, i1) of one tensor. A plain loop that the compiler vectorises (sqrt and div
// included), compiled twice: for the baseline ISA and for AVX2.
__attribute__((always_inline)) inline void update_range_body(const AdamScalars& s, const AdamTensor& t, int64_t i0,
                                                             int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    const float p = t.p[i];
    float g = t.g[i];
    if (s.has_wd && !s.decoupled) g = g + p * s.wd;
    const float m = t.m[i] * s.b1 + g * s.one_minus_b1;
    const float v = t.v[i] * s.b2 + (g * g) * s.one_minus_b2;
    const float denom = std::sqrt(v) * s.inv_sqrt_bc2 + s.eps;
    const float base = (s.has_wd && s.decoupled) ? p * s.decay : p;
    t.m_out[i] = m;
    t.v_out[i] = v;
    t.p_out[i] = base - m / denom * s.step_size;
  }
}

void update_range_generic(const AdamScalars& s, const AdamTensor& t, int64_t i0, int64_t i1) {
  update_range_body(s, t, i0, i1);
}

#if TESSERA_X86_KERNELS
// The same operations in the same order, eight lanes at a time (no FMA contraction, so each step
// rounds as the unfused reference does). In-place use is safe: each lane is loaded before stored.
__attribute__((target("avx2,fma"))) void update_range_avx2(const AdamScalars& s, const AdamTensor& t, int64_t i0,
                                                           int64_t i1) {
  const __m256 b1 = _mm256_set1_ps(s.b1), omb1 = _mm256_set1_ps(s.one_minus_b1);
  const __m256 b2 = _mm256_set1_ps(s.b2), omb2 = _mm256_set1_ps(s.one_minus_b2);
  const __m256 inv_sqrt_bc2 = _mm256_set1_ps(s.inv_sqrt_bc2), eps = _mm256_set1_ps(s.eps);
  const __m256 step = _mm256_set1_ps(s.step_size), wd = _mm256_set1_ps(s.wd), decay = _mm256_set1_ps(s.decay);
  const bool l2 = s.has_wd && !s.decoupled, decoupled = s.has_wd && s.decoupled;
  int64_t i = i0;
  for (; i + 8 <= i1; i += 8) {
    const __m256 p = _mm256_loadu_ps(t.p + i);
    __m256 g = _mm256_loadu_ps(t.g + i);
    if (l2) g = _mm256_add_ps(g, _mm256_mul_ps(p, wd));
    const __m256 m = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(t.m + i), b1), _mm256_mul_ps(g, omb1));
    const __m256 v =
        _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(t.v + i), b2), _mm256_mul_ps(_mm256_mul_ps(g, g), omb2));
    const __m256 denom = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(v), inv_sqrt_bc2), eps);
    const __m256 base = decoupled ? _mm256_mul_ps(p, decay) : p;
    _mm256_storeu_ps(t.m_out + i, m);
    _mm256_storeu_ps(t.v_out + i, v);
    _mm256_storeu_ps(t.p_out + i, _mm256_sub_ps(base, _mm256_mul_ps(_mm256_div_ps(m, denom), step)));
  }
  update_range_body(s, t, i, i1);
}
#endif

}  // namespace

void adam_update(const AdamHyper& h, const AdamTensor& t, runtime::ThreadPool* pool) {
  adam_update_many(h, &t, 1, pool);
}

void adam_update_many(const AdamHyper& h, const AdamTensor* tensors, int64_t count, runtime::ThreadPool* pool) {
  const AdamScalars s = scalars_of(h);
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  int64_t total = 0;
  for (int64_t i = 0; i < count; ++i) total += tensors[i].n;
  [[maybe_unused]] const bool avx2 = use_avx2();
  // Global element range [e0, e1) -> the pieces of each tensor it covers.
  tp.parallel_for(total, 16384, [&](int64_t e0, int64_t e1) {
    int64_t base = 0;
    for (int64_t i = 0; i < count && base < e1; ++i) {
      const AdamTensor& t = tensors[i];
      const int64_t lo = std::max(e0, base), hi = std::min(e1, base + t.n);
      if (lo < hi) {
#if TESSERA_X86_KERNELS
        if (avx2) {
          update_range_avx2(s, t, lo - base, hi - base);
        } else
#endif
        {
          update_range_generic(s, t, lo - base, hi - base);
        }
      }
      base += t.n;
    }
  });
}

}  // namespace tessera::kernels
