#include "tessera/kernels/cpu/kv_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/core/half.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/vec_math.h"

namespace tessera::kernels {

namespace {

constexpr int64_t kChunk = 64;  // rows scored at a time (a stack buffer)

float dot_generic(const float* x, const float* y, int64_t n) {
  float s[4] = {0, 0, 0, 0};
  int64_t p = 0;
  for (; p + 4 <= n; p += 4) {
    for (int u = 0; u < 4; ++u) s[u] += x[p + u] * y[p + u];
  }
  for (; p < n; ++p) s[0] += x[p] * y[p];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

void scale_add_generic(float* y, float c, float a, const float* x, int64_t n) {
  for (int64_t p = 0; p < n; ++p) y[p] = y[p] * c + a * x[p];
}

float dot_generic(const float* x, const uint16_t* y, int64_t n) {
  float s = 0;
  for (int64_t p = 0; p < n; ++p) s += x[p] * f16_bits_to_f32(y[p]);
  return s;
}

void scale_add_generic(float* y, float c, float a, const uint16_t* x, int64_t n) {
  for (int64_t p = 0; p < n; ++p) y[p] = y[p] * c + a * f16_bits_to_f32(x[p]);
}

#if TESSERA_X86_KERNELS
// Out-of-line AVX2 versions (called, not inlined, from the portable loop around them).
__attribute__((target("avx2,fma"))) float dot_avx2(const float* x, const float* y, int64_t n) {
  return vec::dot(x, y, static_cast<long>(n));
}
__attribute__((target("avx2,fma"))) void scale_add_avx2(float* y, float c, float a, const float* x, int64_t n) {
  vec::scale_add(y, c, a, x, static_cast<long>(n));
}
__attribute__((target("avx2,fma,f16c"))) float dot_avx2(const float* x, const uint16_t* y, int64_t n) {
  __m256 s = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 <= n; p += 8) {
    const __m256 wide = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + p)));
    s = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), wide, s);
  }
  float t = vec::hsum(s);
  for (; p < n; ++p) t += x[p] * f16_bits_to_f32(y[p]);
  return t;
}
__attribute__((target("avx2,fma,f16c"))) void scale_add_avx2(float* y, float c, float a, const uint16_t* x,
                                                             int64_t n) {
  const __m256 vc = _mm256_set1_ps(c), va = _mm256_set1_ps(a);
  int64_t p = 0;
  for (; p + 8 <= n; p += 8) {
    const __m256 wide = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + p)));
    _mm256_storeu_ps(y + p, _mm256_fmadd_ps(va, wide, _mm256_mul_ps(vc, _mm256_loadu_ps(y + p))));
  }
  for (; p < n; ++p) y[p] = y[p] * c + a * f16_bits_to_f32(x[p]);
}
#endif

// One (query, head) pair: out = sum_j softmax_j(scale * q.k_j) v_j over rows 0..last, kept as a running
// maximum, a running sum and an unnormalised output rescaled whenever the maximum grows.
template <bool kAvx2, class KV>
void attend_one(const KvAttentionShape& s, const float* q, const KV* k, const KV* v, int64_t last, int64_t kv_head,
                float* out) {
  const int64_t d = s.head_dim, dv = s.value_dim, k_row = s.kv_heads * d, v_row = s.kv_heads * dv;
  const KV* kh = k + kv_head * d;
  const KV* vh = v + kv_head * dv;
  std::fill(out, out + dv, 0.0f);
  float best = -std::numeric_limits<float>::infinity(), total = 0.0f;
  float scores[kChunk];
  for (int64_t j0 = 0; j0 <= last; j0 += kChunk) {
    const int64_t n = std::min(kChunk, last + 1 - j0);
    float chunk_best = best;
    for (int64_t j = 0; j < n; ++j) {
      const KV* kj = kh + (j0 + j) * k_row;
      float dp;
      if constexpr (kAvx2) {
        dp = dot_avx2(q, kj, d);
      } else {
        dp = dot_generic(q, kj, d);
      }
      scores[j] = dp * s.scale;
      chunk_best = std::max(chunk_best, scores[j]);
    }
    // Rescale what has been accumulated to the new maximum (exp(-inf) = 0 on the first chunk).
    const float c = std::exp(best - chunk_best);
    total *= c;
    best = chunk_best;
    for (int64_t j = 0; j < n; ++j) {
      const float w = std::exp(scores[j] - best);
      total += w;
      const KV* vj = vh + (j0 + j) * v_row;
      const float keep = j == 0 ? c : 1.0f;
      if constexpr (kAvx2) {
        scale_add_avx2(out, keep, w, vj, dv);
      } else {
        scale_add_generic(out, keep, w, vj, dv);
      }
    }
  }
  const float inv = 1.0f / total;
  for (int64_t c = 0; c < dv; ++c) out[c] *= inv;
}

}  // namespace

namespace {

template <class KV>
void run_all(const KvAttentionShape& s, const float* q, const KV* k, const KV* v, const int64_t* positions,
             float* out, runtime::ThreadPool& pool) {
  [[maybe_unused]] const bool avx2 = use_avx2();
  const int64_t group = s.q_heads / s.kv_heads;
  pool.parallel_for(s.m * s.q_heads, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const float* qt = q + t * s.head_dim;
      float* ot = out + t * s.value_dim;
      const int64_t last = positions[t / s.q_heads], kv_head = t % s.q_heads / group;
#if TESSERA_X86_KERNELS
      if (avx2) {
        attend_one<true>(s, qt, k, v, last, kv_head, ot);
      } else
#endif
      {
        attend_one<false>(s, qt, k, v, last, kv_head, ot);
      }
    }
  });
}

}  // namespace

void kv_attention(const KvAttentionShape& s, const float* q, const void* k, const void* v, bool kv_f16,
                  const int64_t* positions, float* out, runtime::ThreadPool& pool) {
  if (kv_f16) {
    run_all(s, q, static_cast<const uint16_t*>(k), static_cast<const uint16_t*>(v), positions, out, pool);
  } else {
    run_all(s, q, static_cast<const float*>(k), static_cast<const float*>(v), positions, out, pool);
  }
}

}  // namespace tessera::kernels
