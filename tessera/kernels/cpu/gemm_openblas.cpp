// The OpenBLAS provider: cblas_sgemm, then the epilogue as one extra pass over C (OpenBLAS has no
// fused epilogue). Built only when CMake found OpenBLAS (TESSERA_HAVE_OPENBLAS).
#include <algorithm>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/gemm_internal.h"

#ifdef TESSERA_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace tessera::kernels {

bool openblas_available() {
#ifdef TESSERA_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

namespace gemm_detail {

void sgemm_openblas(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                    const GemmEpilogue& epilogue, runtime::ThreadPool& pool) {
#ifdef TESSERA_HAVE_OPENBLAS
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
  if (epilogue_is_empty(epilogue)) return;
  pool.parallel_for(m, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
                    [&](int64_t r0, int64_t r1) { apply_epilogue(c, ldc, r0, r1 - r0, 0, n, epilogue); });
#else
  (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb;
  (void)beta, (void)c, (void)ldc, (void)epilogue, (void)pool;
  fail("sgemm: the OpenBLAS provider was requested but Tessera was built without OpenBLAS");
#endif
}

}  // namespace gemm_detail
}  // namespace tessera::kernels
