// Row-wise softmax, log_softmax, their gradients and cross-entropy. Each row is handled by one
// thread in three streaming passes; the AVX2 path uses the vectorised exp of vec_math.h.
#include "tessera/kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/vec_math.h"

namespace tessera::kernels {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- per-row building blocks, portable ----------------------------------------------------------
float row_max_generic(const float* x, int64_t n) {
  float m = kNegInf;
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

// sum(exp(x - shift)); when out != nullptr also stores each exp.
float exp_sum_generic(const float* x, int64_t n, float shift, float* out) {
  double s = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    const float e = std::exp(x[j] - shift);
    if (out != nullptr) out[j] = e;
    s += e;
  }
  return static_cast<float>(s);
}

// ---- per-row building blocks, AVX2 --------------------------------------------------------------
#if TESSERA_X86_KERNELS
__attribute__((target("avx2,fma"))) float row_max_avx2(const float* x, int64_t n) {
  __m256 m0 = _mm256_set1_ps(kNegInf), m1 = m0;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + j + 8));
  }
  for (; j + 8 <= n; j += 8) m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
  float m = vec::hmax(_mm256_max_ps(m0, m1));
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

__attribute__((target("avx2,fma"))) float exp_sum_avx2(const float* x, int64_t n, float shift, float* out) {
  const __m256 sh = _mm256_set1_ps(shift);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m256 e0 = vec::exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), sh));
    const __m256 e1 = vec::exp(_mm256_sub_ps(_mm256_loadu_ps(x + j + 8), sh));
    if (out != nullptr) {
      _mm256_storeu_ps(out + j, e0);
      _mm256_storeu_ps(out + j + 8, e1);
    }
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
  }
  for (; j + 8 <= n; j += 8) {
    const __m256 e = vec::exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), sh));
    if (out != nullptr) _mm256_storeu_ps(out + j, e);
    s0 = _mm256_add_ps(s0, e);
  }
  if (j < n) {
    const __m256i mask = vec::tail_mask(n - j);
    const __m256 e =
        _mm256_and_ps(vec::exp(_mm256_sub_ps(_mm256_maskload_ps(x + j, mask), sh)), _mm256_castsi256_ps(mask));
    if (out != nullptr) _mm256_maskstore_ps(out + j, mask, e);
    s1 = _mm256_add_ps(s1, e);
  }
  return vec::hsum(_mm256_add_ps(s0, s1));
}

__attribute__((target("avx2,fma"))) void scale_avx2(float* y, int64_t n, float s) {
  const __m256 sv = _mm256_set1_ps(s);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(y + j, _mm256_mul_ps(_mm256_loadu_ps(y + j), sv));
  for (; j < n; ++j) y[j] *= s;
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* a, const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 8), _mm256_loadu_ps(b + j + 8), s1);
  }
  float s = vec::hsum(_mm256_add_ps(s0, s1));
  for (; j < n; ++j) s += a[j] * b[j];
  return s;
}

// dx = y * (dy - d), written so dx may alias dy.
__attribute__((target("avx2,fma"))) void softmax_grad_row_avx2(const float* y, const float* dy, float* dx, int64_t n,
                                                               float d) {
  const __m256 dv = _mm256_set1_ps(d);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(dx + j, _mm256_mul_ps(_mm256_loadu_ps(y + j), _mm256_sub_ps(_mm256_loadu_ps(dy + j), dv)));
  for (; j < n; ++j) dx[j] = y[j] * (dy[j] - d);
}

// dx = dy - exp(y) * s.
__attribute__((target("avx2,fma"))) void log_softmax_grad_row_avx2(const float* y, const float* dy, float* dx,
                                                                   int64_t n, float s) {
  const __m256 sv = _mm256_set1_ps(s);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(dx + j, _mm256_fnmadd_ps(vec::exp(_mm256_loadu_ps(y + j)), sv, _mm256_loadu_ps(dy + j)));
  for (; j < n; ++j) dx[j] = dy[j] - std::exp(y[j]) * s;
}
#endif  // TESSERA_X86_KERNELS

// avx2: use_avx2(), always false in a build without the x86 kernels.
#if TESSERA_X86_KERNELS
float row_max(const float* x, int64_t n, bool avx2) {
  return avx2 ? row_max_avx2(x, n) : row_max_generic(x, n);
}
float exp_sum(const float* x, int64_t n, float shift, float* out, bool avx2) {
  return avx2 ? exp_sum_avx2(x, n, shift, out) : exp_sum_generic(x, n, shift, out);
}
#else
float row_max(const float* x, int64_t n, bool) {
  return row_max_generic(x, n);
}
float exp_sum(const float* x, int64_t n, float shift, float* out, bool) {
  return exp_sum_generic(x, n, shift, out);
}
#endif
float dot(const float* a, const float* b, int64_t n, [[maybe_unused]] bool avx2) {
#if TESSERA_X86_KERNELS
  if (avx2) return dot_avx2(a, b, n);
#endif
  double s = 0.0;
  for (int64_t j = 0; j < n; ++j) s += static_cast<double>(a[j]) * b[j];
  return static_cast<float>(s);
}

// Runs row_fn(r) over all rows, in chunks of at least ~16K elements per thread.
template <typename F>
void for_rows(int64_t rows, int64_t cols, runtime::ThreadPool* pool, F&& row_fn) {
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  tp.parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) row_fn(r);
  });
}

void check_sizes(const char* what, int64_t rows, int64_t cols) {
  TESSERA_CHECK(rows >= 0 && cols >= 0, "{}: negative size rows={} cols={}", what, rows, cols);
}

}  // namespace

void softmax_forward(int64_t rows, int64_t cols, const float* x, float* y, runtime::ThreadPool* pool) {
  check_sizes("softmax_forward", rows, cols);
  [[maybe_unused]] const bool avx2 = use_avx2();
  for_rows(rows, cols, pool, [&](int64_t r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float m = row_max(xr, cols, avx2);
    const float inv = 1.0f / exp_sum(xr, cols, m, yr, avx2);
#if TESSERA_X86_KERNELS
    if (avx2) {
      scale_avx2(yr, cols, inv);
    } else
#endif
    {
      for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
    }
  });
}

void log_softmax_forward(int64_t rows, int64_t cols, const float* x, float* y, runtime::ThreadPool* pool) {
  check_sizes("log_softmax_forward", rows, cols);
  [[maybe_unused]] const bool avx2 = use_avx2();
  for_rows(rows, cols, pool, [&](int64_t r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float m = row_max(xr, cols, avx2);
    // (x - m) - log s, not x - (m + log s): m + log s rounds away log s's low bits when |m| is large.
    const float log_sum = std::log(exp_sum(xr, cols, m, nullptr, avx2));
    for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) - log_sum;
  });
}

void softmax_backward(int64_t rows, int64_t cols, const float* y, const float* dy, float* dx,
                      runtime::ThreadPool* pool) {
  check_sizes("softmax_backward", rows, cols);
  [[maybe_unused]] const bool avx2 = use_avx2();
  for_rows(rows, cols, pool, [&](int64_t r) {
    const float* yr = y + r * cols;
    const float* gr = dy + r * cols;
    float* dr = dx + r * cols;
    const float d = dot(gr, yr, cols, avx2);
#if TESSERA_X86_KERNELS
    if (avx2) {
      softmax_grad_row_avx2(yr, gr, dr, cols, d);
    } else
#endif
    {
      for (int64_t j = 0; j < cols; ++j) dr[j] = yr[j] * (gr[j] - d);
    }
  });
}

void log_softmax_backward(int64_t rows, int64_t cols, const float* y, const float* dy, float* dx,
                          runtime::ThreadPool* pool) {
  check_sizes("log_softmax_backward", rows, cols);
  [[maybe_unused]] const bool avx2 = use_avx2();
  for_rows(rows, cols, pool, [&](int64_t r) {
    const float* yr = y + r * cols;
    const float* gr = dy + r * cols;
    float* dr = dx + r * cols;
    double s = 0.0;
    for (int64_t j = 0; j < cols; ++j) s += gr[j];
#if TESSERA_X86_KERNELS
    if (avx2) {
      log_softmax_grad_row_avx2(yr, gr, dr, cols, static_cast<float>(s));
    } else
#endif
    {
      for (int64_t j = 0; j < cols; ++j) dr[j] = gr[j] - std::exp(yr[j]) * static_cast<float>(s);
    }
  });
}

namespace {
void check_targets(int64_t rows, int64_t cols, const int64_t* targets, int64_t ignore_index, const char* what) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = targets[r];
    TESSERA_CHECK(t == ignore_index || (t >= 0 && t < cols), "{}: target {} of row {} is outside [0, {})", what, t, r,
                  cols);
  }
}
}  // namespace

void cross_entropy_forward(int64_t rows, int64_t cols, const float* logits, const int64_t* targets, float* loss,
                           int64_t ignore_index, runtime::ThreadPool* pool) {
  check_sizes("cross_entropy_forward", rows, cols);
  check_targets(rows, cols, targets, ignore_index, "cross_entropy_forward");
  [[maybe_unused]] const bool avx2 = use_avx2();
  for_rows(rows, cols, pool, [&](int64_t r) {
    if (targets[r] == ignore_index) {
      loss[r] = 0.0f;
      return;
    }
    const float* xr = logits + r * cols;
    const float m = row_max(xr, cols, avx2);
    loss[r] = std::log(exp_sum(xr, cols, m, nullptr, avx2)) - (xr[targets[r]] - m);
  });
}

void cross_entropy_backward(int64_t rows, int64_t cols, const float* logits, const int64_t* targets, const float* dloss,
                            int64_t dloss_stride, float* dlogits, int64_t ignore_index, runtime::ThreadPool* pool) {
  check_sizes("cross_entropy_backward", rows, cols);
  check_targets(rows, cols, targets, ignore_index, "cross_entropy_backward");
  [[maybe_unused]] const bool avx2 = use_avx2();
  for_rows(rows, cols, pool, [&](int64_t r) {
    float* dr = dlogits + r * cols;
    if (targets[r] == ignore_index) {
      std::fill(dr, dr + cols, 0.0f);
      return;
    }
    const float* xr = logits + r * cols;
    const float m = row_max(xr, cols, avx2);
    const float scale = dloss[r * dloss_stride] / exp_sum(xr, cols, m, dr, avx2);  // dr holds exp(x - m)
#if TESSERA_X86_KERNELS
    if (avx2) {
      scale_avx2(dr, cols, scale);
    } else
#endif
    {
      for (int64_t j = 0; j < cols; ++j) dr[j] *= scale;
    }
    dr[targets[r]] -= dloss[r * dloss_stride];
  });
}

}  // namespace tessera::kernels
