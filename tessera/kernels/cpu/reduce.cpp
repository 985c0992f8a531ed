// Reductions over the last axis, the leading axis, or the outer+inner axes of a 3-D view. Sums are
// accumulated in several independent float lanes per thread and combined in double, which keeps
// both the speed of vector adds and an error close to the double-accumulating reference.
#include "tessera/kernels/cpu/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tessera/core/error.h"

namespace tessera::kernels {

namespace {

constexpr int64_t kBlock = 256;  // elements summed in float before they are added to a double

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

// op over n contiguous floats.
float reduce_contiguous(ReduceOp op, const float* x, int64_t n) {
  if (is_sum(op)) {
    double total = 0.0;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t e = std::min(n, b + kBlock);
      float lanes[16] = {};
      int64_t j = b;
      for (; j + 16 <= e; j += 16)
        for (int l = 0; l < 16; ++l) lanes[l] += x[j + l];
      float s = 0.0f;
      for (float l : lanes) s += l;
      for (; j < e; ++j) s += x[j];
      total += s;
    }
    return static_cast<float>(total);
  }
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
  const float scale = op == ReduceOp::mean ? 1.0f / static_cast<float>(cols) : 1.0f;
  tp.parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float v = reduce_contiguous(op, x + r * cols, cols);
      out[r] = op == ReduceOp::mean ? (cols == 0 ? std::nanf("") : v * scale) : v;
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
      std::fill(total, total + width, 0.0);
      for (int64_t rb = 0; rb < rows; rb += kBlock) {
        const int64_t re = std::min(rows, rb + kBlock);
        std::fill(partial, partial + width, identity(op));
        for (int64_t r = rb; r < re; ++r) {
          const float* xr = x + r * cols + cc;
          if (is_sum(op)) {
            for (int64_t j = 0; j < width; ++j) partial[j] += xr[j];
          } else {
            for (int64_t j = 0; j < width; ++j) partial[j] = combine(op, partial[j], xr[j]);
          }
        }
        for (int64_t j = 0; j < width; ++j)
          total[j] = is_sum(op) ? total[j] + partial[j]
                                : (rb == 0 ? partial[j] : combine(op, static_cast<float>(total[j]), partial[j]));
      }
      for (int64_t j = 0; j < width; ++j) {
        float v = rows == 0 ? identity(op) : static_cast<float>(total[j]);
        if (op == ReduceOp::mean) v = rows == 0 ? std::nanf("") : v / static_cast<float>(rows);
        out[cc + j] = v;
      }
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
        const float v = reduce_contiguous(op, x + (o * mid + m) * inner, inner);
        if (is_sum(op)) {
          total += v;
        } else {
          acc = combine(op, acc, v);
        }
      }
      float v = is_sum(op) ? static_cast<float>(total) : acc;
      if (op == ReduceOp::mean) v = count == 0 ? std::nanf("") : v / static_cast<float>(count);
      out[m] = v;
    }
  });
}

}  // namespace tessera::kernels
