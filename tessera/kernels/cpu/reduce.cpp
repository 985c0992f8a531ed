// Reductions over the last axis, the leading axis, or the outer+inner axes of a 3-D view. Sums are
// accumulated in double (in independent vector lanes, AVX2 where the CPU has it): the reference
// backend sums in double, and a float accumulator is off by enough that layer_norm of a constant row
// (3000.3 repeated) came out -0.15 instead of 0 once 1/sqrt(eps) amplified the mean's error. Reading
// floats bounds these loops by memory, not by the wider adds. Means divide in double before the
// result is rounded to float, so mean([3e38, 3e38]) is 3e38, not inf.
#include "tessera/kernels/cpu/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/vec_math.h"

namespace tessera::kernels {

namespace {


inline float combine(ReduceOp op, float acc, float v) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      return acc + v;
    case ReduceOp::max:
      return (v > acc || std::isnan(v)) && !std::isnan(acc) ? v : acc;
    case ReduceOp::min:
      return (v < acc || std::isnan(v)) && !std::isnan(acc) ? v : acc;
  }
  return acc;
}

inline float identity(ReduceOp op) {
  if (op == ReduceOp::max) return -std::numeric_limits<float>::infinity();
  if (op == ReduceOp::min) return std::numeric_limits<float>::infinity();
  return 0.0f;
}

inline bool is_sum(ReduceOp op) {
  return op == ReduceOp::sum || op == ReduceOp::mean;
}

#if TESSERA_X86_KERNELS
// The sum of n contiguous floats, in double.
__attribute__((target("avx2,fma"))) double sum_avx2(const float* x, int64_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), a2 = _mm256_setzero_pd(), a3 = _mm256_setzero_pd();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + j)));
    a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + j + 4)));
    a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm_loadu_ps(x + j + 8)));
    a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm_loadu_ps(x + j + 12)));
  }
  const __m256d a = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  double total = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  for (; j < n; ++j) total += x[j];
  return total;
}
#endif

double sum_contiguous(const float* x, int64_t n) {
#if TESSERA_X86_KERNELS
  if (use_avx2()) return sum_avx2(x, n);
#endif
  double lanes[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += x[j + l];
  double total = 0.0;
  for (double l : lanes) total += l;
  for (; j < n; ++j) total += x[j];
  return total;
}

// max/min over n contiguous floats.
float extremum_contiguous(ReduceOp op, const float* x, int64_t n) {
  float acc = identity(op);
  for (int64_t j = 0; j < n; ++j) acc = combine(op, acc, x[j]);
  return acc;
}

void check(const char* what, int64_t a, int64_t b, int64_t c) {
  TESSERA_CHECK(a >= 0 && b >= 0 && c >= 0, "{}: negative size ({}, {}, {})", what, a, b, c);
}

}  // namespace

void reduce_rows(ReduceOp op, int64_t rows, int64_t cols, const float* x, float* out, runtime::ThreadPool* pool) {
  check("reduce_rows", rows, cols, 1);
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  tp.parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      if (op == ReduceOp::sum) {
        out[r] = static_cast<float>(sum_contiguous(xr, cols));
      } else if (op == ReduceOp::mean) {
        out[r] = cols == 0 ? std::nanf("") : static_cast<float>(sum_contiguous(xr, cols) / static_cast<double>(cols));
      } else {
        out[r] = extremum_contiguous(op, xr, cols);
      }
    }
  });
}

void reduce_cols(ReduceOp op, int64_t rows, int64_t cols, const float* x, float* out, runtime::ThreadPool* pool) {
  check("reduce_cols", rows, cols, 1);
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  // Split over columns in cache-line multiples; each thread streams its column band row by row.
  const int64_t bands = (cols + 15) / 16;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(rows * 16, 1));
  tp.parallel_for(bands, grain, [&](int64_t b0, int64_t b1) {
    const int64_t c0 = b0 * 16, c1 = std::min(cols, b1 * 16);
    constexpr int64_t kChunk = 512;  // column chunk kept in a stack accumulator
    for (int64_t cc = c0; cc < c1; cc += kChunk) {
      const int64_t width = std::min(kChunk, c1 - cc);
      double total[kChunk];
      float partial[kChunk];
      if (is_sum(op)) {
        std::fill(total, total + width, 0.0);
        for (int64_t r = 0; r < rows; ++r) {
          const float* xr = x + r * cols + cc;
          for (int64_t j = 0; j < width; ++j) total[j] += xr[j];
        }
        for (int64_t j = 0; j < width; ++j) {
          const double v = op == ReduceOp::mean ? total[j] / static_cast<double>(rows) : total[j];
          out[cc + j] = op == ReduceOp::mean && rows == 0 ? std::nanf("") : static_cast<float>(v);
        }
        continue;
      }
      std::fill(partial, partial + width, identity(op));
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols + cc;
        for (int64_t j = 0; j < width; ++j) partial[j] = combine(op, partial[j], xr[j]);
      }
      std::copy(partial, partial + width, out + cc);
    }
  });
}

void reduce_outer_inner(ReduceOp op, int64_t outer, int64_t mid, int64_t inner, const float* x, float* out,
                        runtime::ThreadPool* pool) {
  check("reduce_outer_inner", outer, mid, inner);
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const int64_t count = outer * inner;
  tp.parallel_for(mid, std::max<int64_t>(1, 16384 / std::max<int64_t>(count, 1)), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      double total = 0.0;
      float acc = identity(op);
      for (int64_t o = 0; o < outer; ++o) {
        const float* xo = x + (o * mid + m) * inner;
        if (is_sum(op)) {
          total += sum_contiguous(xo, inner);
        } else {
          acc = combine(op, acc, extremum_contiguous(op, xo, inner));
        }
      }
      if (op == ReduceOp::mean) {
        out[m] = count == 0 ? std::nanf("") : static_cast<float>(total / static_cast<double>(count));
      } else {
        out[m] = is_sum(op) ? static_cast<float>(total) : acc;
      }
    }
  });
}

}  // namespace tessera::kernels
