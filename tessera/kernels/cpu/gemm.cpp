// The public SGEMM/DGEMM entry points: argument checks, degenerate shapes, the provider switch and
// the choice between the small-m (unpacked) path and the packed path.
#include "tessera/kernels/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/gemm_internal.h"

namespace tessera::kernels {
namespace {

// Measured on this machine (bench_gemm): Tessera's kernel is at least as fast as OpenBLAS on the
// 1024^3 and MLP shapes, and much faster for few rows, so it is the default.
GemmProvider initial_provider() {
  if (const char* env = std::getenv("TESSERA_GEMM")) {
    if (std::strcmp(env, "openblas") == 0 && openblas_available()) return GemmProvider::openblas;
    if (std::strcmp(env, "tessera") == 0) return GemmProvider::tessera;
  }
  return GemmProvider::tessera;
}

std::atomic<GemmProvider>& provider_slot() {
  static std::atomic<GemmProvider> slot{initial_provider()};
  return slot;
}

void check_args(const char* name, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                int64_t ldc) {
  TESSERA_CHECK(m >= 0 && n >= 0 && k >= 0, "{}: negative size m={}, n={}, k={}", name, m, n, k);
  const int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
  TESSERA_CHECK(lda >= std::max<int64_t>(a_cols, 1), "{}: lda={} is smaller than op(A)'s stored row length {}", name,
                lda, a_cols);
  TESSERA_CHECK(ldb >= std::max<int64_t>(b_cols, 1), "{}: ldb={} is smaller than op(B)'s stored row length {}", name,
                ldb, b_cols);
  TESSERA_CHECK(ldc >= std::max<int64_t>(n, 1), "{}: ldc={} is smaller than n={}", name, ldc, n);
}

// k == 0 or alpha == 0: C = beta * C (C not read when beta == 0), then the epilogue.
void scale_only(int64_t m, int64_t n, float beta, float* c, int64_t ldc, const GemmEpilogue& epilogue,
                runtime::ThreadPool& pool) {
  pool.parallel_for(m, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      float* crow = c + i * ldc;
      if (beta == 0.0f) {
        std::fill(crow, crow + n, 0.0f);
      } else if (beta != 1.0f) {
        for (int64_t j = 0; j < n; ++j) crow[j] *= beta;
      }
    }
    gemm_detail::apply_epilogue(c, ldc, r0, r1 - r0, 0, n, epilogue);
  });
}

}  // namespace

GemmProvider gemm_provider() {
  return provider_slot().load(std::memory_order_relaxed);
}

void set_gemm_provider(GemmProvider provider) {
  TESSERA_CHECK(provider != GemmProvider::openblas || openblas_available(),
                "set_gemm_provider: OpenBLAS was not found when Tessera was built (install libopenblas-dev and "
                "re-run cmake)");
  provider_slot().store(provider, std::memory_order_relaxed);
}

std::string gemm_provider_name() {
  return gemm_provider() == GemmProvider::openblas ? "openblas" : "tessera";
}

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmEpilogue& epilogue,
           runtime::ThreadPool* pool) {
  check_args("sgemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  if (k == 0 || alpha == 0.0f) {
    scale_only(m, n, beta, c, ldc, epilogue, tp);
    return;
  }
  if (gemm_provider() == GemmProvider::openblas) {
    gemm_detail::sgemm_openblas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue, tp);
    return;
  }
  if (gemm_detail::prefer_small_m(m, trans_b)) {
    const gemm_detail::MatrixView av{a, lda, trans_a}, bv{b, ldb, trans_b};
    // Column blocks of 64 keep the split cache-line aligned; a second thread pays off once B is
    // larger than L2 can stream in a few microseconds.
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    const int64_t grain = n * k >= (int64_t{1} << 16) ? 1 : blocks;
    tp.parallel_for(blocks, grain, [&](int64_t b0, int64_t b1) {
      gemm_detail::sgemm_small_m(av, bv, m, b0 * kBlock, std::min(n, b1 * kBlock), k, alpha, beta, c, ldc, epilogue);
    });
    return;
  }
  gemm_detail::sgemm_packed(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue, tp);
}

void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc, runtime::ThreadPool* pool) {
  check_args("dgemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(n * std::max<int64_t>(k, 1), 1));
  tp.parallel_for(m, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      double* crow = c + i * ldc;
      if (beta == 0.0) {
        std::fill(crow, crow + n, 0.0);
      } else if (beta != 1.0) {
        for (int64_t j = 0; j < n; ++j) crow[j] *= beta;
      }
      if (alpha == 0.0) continue;
      if (!trans_b) {
        // Row i of C accumulates scaled rows of B: unit-stride inner loop.
        for (int64_t p = 0; p < k; ++p) {
          const double s = alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]);
          const double* brow = b + p * ldb;
          for (int64_t j = 0; j < n; ++j) crow[j] += s * brow[j];
        }
      } else {
        for (int64_t j = 0; j < n; ++j) {
          const double* bcol = b + j * ldb;
          double sum = 0.0;
          if (!trans_a) {
            const double* arow = a + i * lda;
            for (int64_t p = 0; p < k; ++p) sum += arow[p] * bcol[p];
          } else {
            for (int64_t p = 0; p < k; ++p) sum += a[p * lda + i] * bcol[p];
          }
          crow[j] += alpha * sum;
        }
      }
    }
  });
}

}  // namespace tessera::kernels
